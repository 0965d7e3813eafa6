/**
 * The supervisor pattern, as TrustGraph's orchestrator runs it:
 *
 *   1. decomposition (no `synthesise` step in the history): `supervisor-decompose` splits the question into at
 *      most `max_subagents` goals; the fan-out record goes to the aggregation topic (fan-in.ts), then one
 *      subagent request per goal to the request topic (`pattern` react, `correlation_id`, `parent_session_id`,
 *      `subagent_goal`, `expected_siblings`, the parent's groups (nothing more) and state).
 *   2. each subagent runs as a ReAct conversation of its own; its answer comes back as a `subagent-completion`
 *      request, which the replica that receives it forwards to the aggregation topic.
 *   3. the aggregation's owner, once every sibling is in, emits the findings and the synthesis request
 *      (`emitFanIn` below, called by src/flow/fan-in-consumer.ts); `supervisor-synthesise` writes the answer
 *      from the results.
 */
import { randomUUID } from 'node:crypto';
import { clipText } from '../../errors/index.js';
import type { AgentAsk } from '../../groups/index.js';
import { makeAgentRequest, makeAgentStep, pythonRepr, type AgentRequest, type AgentStep } from '../../wire/index.js';
import { provenanceUris, sessionTriples, sessionUriKey } from '../explainability.js';
import { DialogError } from '../errors.js';
import { explain, saveDocument, type IterationContext, type IterationResult } from '../iteration.js';
import { answerResponse, thoughtResponse } from '../responses.js';
import { patternLimits } from '../orchestrator/catalog.js';
import type { FanOutRecord, SiblingResult } from '../orchestrator/fan-in.js';
import type { Pattern, PatternContext } from './pattern.js';
import { sessionIdOf } from '../session-id.js';
import { decompositionTriples, findingTriples, patternDocumentIds, patternUris, synthesisTriples } from '../orchestrator/pattern-explain.js';
import { callTemplate, callTemplateText } from '../orchestrator/template-prompt.js';

export const SUPERVISOR_DECOMPOSE_TEMPLATE = 'supervisor-decompose';
export const SUPERVISOR_SYNTHESISE_TEMPLATE = 'supervisor-synthesise';
/** The step type of the aggregator's synthesis request. */
export const SYNTHESISE = 'synthesise';

export const supervisor: Pattern = {
  id: 'supervisor',
  run: (ctx, ask, result) => supervisorIteration(ctx, ask, result),
};

async function supervisorIteration(ctx: PatternContext, ask: AgentAsk, result: IterationResult): Promise<IterationResult> {
  const { request } = ask;
  const sessionId = sessionIdOf(request, ctx.events);
  const key = sessionUriKey(sessionId);
  const now = ctx.now ?? (() => new Date());
  if (request.history.length === 0) await explain(ctx, request, provenanceUris.session(key), sessionTriples(key, request.question, now()));
  const results = subagentResults(request.history);
  if (results.length > 0) return synthesis(ctx, request, key, results, result);
  return decomposition(ctx, ask, sessionId, key, result);
}

/** The results the aggregation put in the history's `synthesise` step(s), goal → answer. */
function subagentResults(history: readonly AgentStep[]): { goal: string; result: string }[] {
  const results = new Map<string, string>();
  for (const step of history) {
    if (step.step_type !== SYNTHESISE) continue;
    for (const [goal, answer] of Object.entries(step.subagent_results)) results.set(goal, answer);
  }
  return [...results].map(([goal, answer]) => ({ goal, result: answer }));
}

async function decomposition(
  ctx: PatternContext,
  ask: AgentAsk,
  sessionId: string,
  key: string,
  result: IterationResult,
): Promise<IterationResult> {
  const { request } = ask;
  const fanOut = ctx.output.aggregate;
  if (!fanOut) throw new DialogError('the supervisor pattern needs an aggregation topic, and this flow has none');
  const toolSet = ctx.registry.offer(ask);
  result.toolSet = toolSet;
  ctx.events.toolsOffered(toolSet);
  const { maxSubagents } = patternLimits(ctx.catalog, supervisor.id);
  const started = performance.now();
  const reply = await callTemplate(
    ctx.prompt,
    SUPERVISOR_DECOMPOSE_TEMPLATE,
    {
      question: request.question,
      framing: request.framing,
      max_subagents: maxSubagents,
      tools: toolSet.tools.map((t) => ({ name: t.name, description: t.description })),
    },
    ctx.orchestration.usage,
  );
  ctx.events.llmFinished((performance.now() - started) / 1000);
  const listed = Array.isArray(reply.value) ? reply.value.filter((g): g is string => typeof g === 'string') : [];
  if (listed.length > maxSubagents) {
    ctx.logger.warn({ goals: listed.length, maxSubagents }, `supervisor-decompose gave ${listed.length} goals; fanning out the first ${maxSubagents}`);
  }
  const goals = listed.length > 0 ? listed.slice(0, maxSubagents) : [request.question];

  const decompositionUri = patternUris.decomposition(key);
  await ctx.output.respond(thoughtResponse(`Decomposed into ${goals.length} sub-goals: ${pythonRepr(goals)}`, decompositionUri, true));
  const derivedFrom = ctx.orchestration.patternDecisionUri ?? provenanceUris.session(key);
  await explain(ctx, request, decompositionUri, decompositionTriples(key, derivedFrom, goals));

  const correlationId = randomUUID();
  const record = makeAgentRequest({ ...request, session_id: sessionId, correlation_id: correlationId, expected_siblings: goals.length });
  try {
    // The fan-out record (what TrustGraph keeps in memory) is with the broker before any subagent can finish.
    await fanOut('fan-out', record);
    for (const goal of goals) await ctx.output.next(subagentRequest(request, sessionId, correlationId, goal, goals.length));
  } catch (error) {
    // The client gets this error as its one final message: the record (wherever its key's owner is) must not
    // end the conversation again when the published subagents or its timeout come back.
    await fanOut('cancel', record).catch((cancelError: unknown) =>
      ctx.logger.error(
        { err: cancelError, correlationId },
        'Could not cancel a failed fan-out: its published subagents or its timeout may still send this conversation a second final message',
      ),
    );
    throw error;
  }
  ctx.events.subagentsFannedOut(goals.length);
  ctx.logger.info({ correlationId, subagents: goals.length }, `Supervisor fanned out ${goals.length} subagents`);
  return { ...result, outcome: 'next', action: 'decompose' };
}

/**
 * One subagent's first request: its goal as the question, the parent's groups and state, a fresh session.
 * TrustGraph starts subagents in state "": then a supervisor in a late state offered its subagents the tools
 * of a fresh start, and a policy's initial states refused them.
 */
function subagentRequest(parent: AgentRequest, parentSessionId: string, correlationId: string, goal: string, siblings: number): AgentRequest {
  return makeAgentRequest({
    question: goal,
    // A request without a state gives "" as TrustGraph does.
    state: parent.state ?? '',
    group: parent.group,
    history: [],
    collection: parent.collection,
    streaming: false,
    session_id: randomUUID(),
    conversation_id: parent.conversation_id,
    pattern: 'react',
    task_type: parent.task_type,
    framing: parent.framing,
    correlation_id: correlationId,
    parent_session_id: parentSessionId,
    subagent_goal: goal,
    expected_siblings: siblings,
  });
}

async function synthesis(
  ctx: PatternContext,
  request: AgentRequest,
  key: string,
  results: readonly { goal: string; result: string }[],
  result: IterationResult,
): Promise<IterationResult> {
  const messageId = patternUris.synthesis(key);
  await ctx.output.respond(thoughtResponse('Synthesising final answer from sub-agent results', messageId, true));
  const started = performance.now();
  const answer = await callTemplateText(
    ctx.prompt,
    SUPERVISOR_SYNTHESISE_TEMPLATE,
    { question: request.question, framing: request.framing, results },
    ctx.orchestration.usage,
    request.streaming,
    (chunk) => ctx.output.respond(answerResponse(chunk, messageId, { message: false, dialog: false })),
  );
  ctx.events.llmFinished((performance.now() - started) / 1000);
  const document = saveDocument(ctx, { id: patternDocumentIds.synthesis(key), title: 'Synthesis', content: answer });
  const findings = results.map((_, i) => patternUris.finding(key, i));
  await explain(ctx, request, messageId, synthesisTriples(key, findings, 'subagents-complete', document));
  ctx.events.sessionEnded('completed', request.history.length + 1);
  const content = request.streaming ? '' : answer;
  await ctx.output.respond({ ...answerResponse(content, messageId, { message: true, dialog: true }), ...ctx.orchestration.usage.fields() });
  return { ...result, outcome: 'answer', stateAfter: result.stateBefore };
}

/**
 * What the aggregation's owner sends once every sibling is in: one finding per result (derived from the
 * subagent's conclusion, its answer saved as a document), then the synthesis request on the request topic —
 * the supervisor's request with a `synthesise` step carrying the results, as TrustGraph's aggregator builds it.
 */
export async function emitFanIn(ctx: Pick<IterationContext, 'output' | 'logger'>, record: FanOutRecord, results: readonly SiblingResult[]): Promise<void> {
  const { template } = record;
  const parentKey = sessionUriKey(template.session_id);
  for (const [index, sibling] of results.entries()) {
    const document = saveDocument(ctx, {
      id: patternDocumentIds.finding(parentKey, index),
      title: `Finding: ${sibling.goal.slice(0, 60)}`,
      content: sibling.answer,
    });
    const derivedFrom = sibling.sessionId !== '' ? provenanceUris.final(sessionUriKey(sibling.sessionId)) : patternUris.decomposition(parentKey);
    await explain(ctx, template, patternUris.finding(parentKey, index), findingTriples(parentKey, index, derivedFrom, sibling.goal, document));
  }
  let request = synthesisRequest(template, results);
  if (ctx.output.fitsNext && !ctx.output.fitsNext(request)) {
    const fitted = fitResults(template, results, ctx.output.fitsNext);
    ctx.logger.warn(
      { correlationId: record.correlationId, subagents: results.length, keptCharacters: fitted.cap },
      `The subagents' results do not fit in one synthesis request: each was cut to ${fitted.cap} characters`,
    );
    request = fitted.request;
  }
  // Too large even with every result cut (a huge question or history): `next` fails with MessageTooLargeError.
  await ctx.output.next(request);
}

/**
 * The supervisor's request with a `synthesise` step: the results in `subagent_results` (TrustGraph's aggregator
 * also copies them into the observation, which doubled the message; here it names them).
 */
function synthesisRequest(template: AgentRequest, results: readonly SiblingResult[]): AgentRequest {
  const byGoal = Object.fromEntries(results.map((r) => [r.goal, r.answer]));
  const step = makeAgentStep({
    thought: 'All subagents completed',
    action: 'aggregate',
    arguments: {},
    observation: `${results.length} subagent results, in subagent_results`,
    step_type: SYNTHESISE,
    subagent_results: byGoal,
  });
  return makeAgentRequest({
    question: template.question,
    state: template.state ?? '',
    group: template.group,
    history: [...template.history, step],
    collection: template.collection,
    streaming: template.streaming,
    session_id: template.session_id,
    conversation_id: template.conversation_id,
    pattern: supervisor.id,
    task_type: template.task_type,
    framing: template.framing,
  });
}

/** Every result cut to the same length, the longest with which the synthesis request fits (binary search). */
function fitResults(
  template: AgentRequest,
  results: readonly SiblingResult[],
  fits: (request: AgentRequest) => boolean,
): { request: AgentRequest; cap: number } {
  const cut = (cap: number) => synthesisRequest(template, results.map((r) => ({ ...r, answer: clipText(r.answer, cap, { sayLength: true }) })));
  let low = 0;
  let high = Math.max(...results.map((r) => r.answer.length));
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (fits(cut(middle))) low = middle;
    else high = middle - 1;
  }
  return { request: cut(low), cap: low };
}
