/**
 * The plan-then-execute pattern, one iteration per message as TrustGraph's orchestrator runs it:
 *
 *   1. planning (no plan in the history): `plan-create` makes a list of steps; the plan is carried in the
 *      history's `plan` step.
 *   2. execution (a pending step): `plan-step-execute` picks the tool and arguments for the step's goal; the
 *      tool runs; the updated plan is carried in an `execute` step.
 *   3. synthesis (no pending step): `plan-synthesise` writes the answer from the step results.
 *
 * Stricter than TrustGraph, which only filters the prompt's tool list: a plan may only name tools offered for
 * the request's groups in the state the step will run in (the states the earlier steps' tools move to), and a
 * step whose tool is not offered in the state it actually runs in is refused before it runs. A refused (or
 * failed) step makes a new plan while `max_replan_depth` allows, and otherwise ends with the refusal as its
 * result. The state moves only after a tool succeeded, as in ReAct.
 */
import type { AgentAsk } from '../../groups/index.js';
import type { ToolRegistry } from '../../tools/index.js';
import {
  makeAgentRequest,
  makeAgentStep,
  makePlanStep,
  pythonJsonDumps,
  type AgentRequest,
  type AgentStep,
  type PlanStep,
} from '../../wire/index.js';
import { MaxIterationsError } from '../errors.js';
import { provenanceUris, sessionTriples, sessionUriKey } from '../explainability.js';
import { explain, saveDocument, type IterationResult } from '../iteration.js';
import { act, stringifyArguments } from '../tool-action.js';
import { answerResponse, observationResponse, thoughtResponse } from '../responses.js';
import { patternLimits } from '../orchestrator/catalog.js';
import { plannableTools } from '../orchestrator/plannable-tools.js';
import { isSubagent, nextAgentRequest, subagentCompletion } from '../orchestration-fields.js';
import type { Pattern, PatternContext } from './pattern.js';
import { sessionIdOf } from '../session-id.js';
import { patternDocumentIds, patternUris, planRefusalTriples, planTriples, stepResultTriples, synthesisTriples } from '../orchestrator/pattern-explain.js';
import { callTemplate, callTemplateText } from '../orchestrator/template-prompt.js';

export const PLAN_CREATE_TEMPLATE = 'plan-create';
export const PLAN_STEP_EXECUTE_TEMPLATE = 'plan-step-execute';
export const PLAN_SYNTHESISE_TEMPLATE = 'plan-synthesise';

/** One step as the model writes it in `plan-create`'s reply. */
interface PlannedStep {
  goal: string;
  tool_hint: string;
  depends_on: number[];
}

export const planThenExecute: Pattern = {
  id: 'plan-then-execute',
  run: (ctx, ask, result) => planIteration(ctx, ask, result),
};

async function planIteration(ctx: PatternContext, ask: AgentAsk, result: IterationResult): Promise<IterationResult> {
  const { request } = ask;
  const sessionId = sessionIdOf(request, ctx.events);
  const key = sessionUriKey(sessionId);
  const n = request.history.length + 1;
  const now = ctx.now ?? (() => new Date());
  if (n === 1) await explain(ctx, request, provenanceUris.session(key), sessionTriples(key, request.question, now()));
  if (n >= ctx.settings.maxIterations) {
    ctx.events.sessionEnded('max-iterations', ctx.settings.maxIterations);
    throw new MaxIterationsError();
  }
  const plan = latestPlan(request.history);
  const used = replansUsed(request.history);
  const { maxReplanDepth } = patternLimits(ctx.catalog, planThenExecute.id);
  const needsPlan = plan === undefined || (plan.some((s) => s.status === 'failed') && used < maxReplanDepth);
  const run = { ctx, ask, request, sessionId, key, n, result };
  if (needsPlan) return planning(run, plan, plan === undefined ? 0 : used + 1, maxReplanDepth);
  const pending = plan.findIndex((s) => s.status === 'pending');
  if (pending >= 0) return execution(run, plan, pending);
  return synthesis(run, plan);
}

interface Run {
  ctx: PatternContext;
  /** The request with its groups and state normalised once, when it was decoded. */
  ask: AgentAsk;
  request: AgentRequest;
  sessionId: string;
  key: string;
  n: number;
  result: IterationResult;
}

function latestPlan(history: readonly AgentStep[]): PlanStep[] | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const plan = history[i]!.plan;
    if (plan.length > 0) return plan.map((s) => ({ ...s, depends_on: [...s.depends_on] }));
  }
  return undefined;
}

/**
 * Re-plans made so far: the latest plan step's `replan` argument (our addition; TrustGraph's plan step has no
 * arguments, so a plan it made counts as the first).
 */
function replansUsed(history: readonly AgentStep[]): number {
  for (let i = history.length - 1; i >= 0; i--) {
    const step = history[i]!;
    if (step.step_type !== 'plan') continue;
    const value = Number(step.arguments.replan ?? '0');
    return Number.isInteger(value) && value >= 0 ? value : 0;
  }
  return 0;
}

function readPlan(value: unknown): PlannedStep[] {
  if (!Array.isArray(value) || value.length === 0) return [];
  return value.flatMap((item): PlannedStep[] => {
    if (item === null || typeof item !== 'object') return [];
    const step = item as Record<string, unknown>;
    return [
      {
        goal: typeof step.goal === 'string' ? step.goal : '',
        tool_hint: typeof step.tool_hint === 'string' ? step.tool_hint : '',
        depends_on: Array.isArray(step.depends_on) ? step.depends_on.filter((d): d is number => Number.isInteger(d)) : [],
      },
    ];
  });
}

/**
 * Check each step's tool against the groups and the state the step will run in: the request's state moved
 * on by each earlier step's tool (as if it succeeded). The index and reason of the first refused step, if any.
 */
export function checkPlan(
  registry: ToolRegistry,
  ask: Pick<AgentAsk, 'groups' | 'state'>,
  steps: readonly Pick<PlannedStep, 'tool_hint'>[],
): { step: number; tool: string; state: string; reason: string } | undefined {
  let state = ask.state;
  for (const [index, step] of steps.entries()) {
    if (step.tool_hint === '') continue;
    const toolSet = registry.offer({ groups: ask.groups, state });
    const tool = toolSet.get(step.tool_hint);
    if (!tool) {
      const known = registry.get(step.tool_hint) !== undefined;
      const reason = !known
        ? `step ${index} names the tool "${step.tool_hint}", which does not exist`
        : toolSet.leftOutBy(step.tool_hint) === 'group'
          ? `step ${index} names the tool "${step.tool_hint}", which is not in this conversation's groups`
          : `step ${index} names the tool "${step.tool_hint}", which is not available in the state "${state}" that step would run in`;
      return { step: index, tool: step.tool_hint, state, reason };
    }
    state = registry.nextState(tool, state);
  }
  return undefined;
}

async function planning(run: Run, previous: PlanStep[] | undefined, replan: number, maxReplanDepth: number): Promise<IterationResult> {
  const { ctx, request } = run;
  const toolSet = ctx.registry.offer(run.ask);
  run.result.toolSet = toolSet;
  ctx.events.toolsOffered(toolSet);
  const tools = plannableTools(ctx.registry, run.ask);
  let feedback = previous ? replanFeedback(previous) : '';
  let steps: PlannedStep[] = [];
  let attempt = replan;
  // A plan naming a tool the request may not use is refused and made again while the depth allows.
  for (;;) {
    const started = performance.now();
    const reply = await callTemplate(
      ctx.prompt,
      PLAN_CREATE_TEMPLATE,
      { question: request.question, framing: request.framing, tools, ...(feedback ? { feedback } : {}) },
      ctx.orchestration.usage,
    );
    ctx.events.llmFinished((performance.now() - started) / 1000);
    steps = readPlan(reply.value);
    if (steps.length === 0) {
      ctx.logger.warn('plan-create returned no list of steps; falling back to a single step');
      steps = [{ goal: 'Answer the question directly', tool_hint: '', depends_on: [] }];
    }
    const refused = checkPlan(ctx.registry, run.ask, steps);
    if (!refused) break;
    const replan = attempt < maxReplanDepth;
    ctx.events.planStepRefused({ tool: refused.tool, step: refused.step, state: refused.state, at: 'plan', then: replan ? 'replan' : 'observation' });
    ctx.logger.warn({ tool: refused.tool, step: refused.step, state: refused.state }, `Plan refused: ${refused.reason}`);
    // The client is told, as a ReAct refusal is: what was refused, why, and what happens next.
    const refusal = `Plan refused: ${refused.reason}; ${replan ? 'making a new plan' : 'that step will not run'}`;
    const refusalUri = patternUris.planRefusal(run.key, attempt);
    await ctx.output.respond(observationResponse(refusal, refusalUri));
    const derivedFrom = ctx.orchestration.patternDecisionUri ?? provenanceUris.session(run.key);
    await explain(ctx, request, refusalUri, planRefusalTriples(run.key, attempt, derivedFrom, refusal));
    if (!replan) {
      // Out of re-plans: the step keeps its goal but never runs; its result says why.
      steps = steps.map((s, i) => (i === refused.step ? { ...s, tool_hint: '' } : s));
      feedback = refusedText(refused.reason);
      const planSteps = toPlanSteps(steps, refused.step, feedback);
      return publishPlan(run, steps, planSteps, attempt);
    }
    attempt += 1;
    feedback = `${refusedText(refused.reason)} Make a new plan that uses only the tools listed.`;
  }
  return publishPlan(run, steps, toPlanSteps(steps), attempt);
}

function refusedText(reason: string): string {
  return `Error: the plan was refused: ${reason}; that step was not run.`;
}

function replanFeedback(previous: readonly PlanStep[]): string {
  const failed = previous.filter((s) => s.status === 'failed');
  const done = previous.filter((s) => s.status === 'completed');
  return [
    ...failed.map((s) => `The step "${s.goal}" did not succeed: ${s.result}`),
    ...done.map((s) => `The step "${s.goal}" already gave: ${s.result}`),
    'Make a new plan for what is left, using only the tools listed.',
  ].join('\n');
}

function toPlanSteps(steps: readonly PlannedStep[], refused?: number, refusal?: string): PlanStep[] {
  return steps.map((s, i) =>
    makePlanStep({
      goal: s.goal,
      tool_hint: s.tool_hint,
      depends_on: s.depends_on,
      status: i === refused ? 'failed' : 'pending',
      result: i === refused ? (refusal ?? '') : '',
    }),
  );
}

async function publishPlan(run: Run, steps: readonly PlannedStep[], planSteps: PlanStep[], replan: number): Promise<IterationResult> {
  const { ctx, request, sessionId, key } = run;
  const thought = `Created plan with ${steps.length} steps`;
  await ctx.output.respond(thoughtResponse(thought, '', true));
  const derivedFrom = ctx.orchestration.patternDecisionUri ?? provenanceUris.session(key);
  await explain(ctx, request, patternUris.plan(key), planTriples(key, derivedFrom, steps.map((s) => s.goal)));
  ctx.events.planCreated(steps.length, replan);
  const planStep = makeAgentStep({
    thought,
    action: 'plan',
    arguments: replan > 0 ? { replan: String(replan) } : {},
    observation: pythonJsonDumps(steps),
    step_type: 'plan',
    plan: planSteps,
  });
  await ctx.output.next(nextAgentRequest(request, sessionId, request.state, [...request.history, planStep]));
  return { ...run.result, outcome: 'next', action: 'plan', stateAfter: run.ask.state };
}

async function execution(run: Run, plan: PlanStep[], index: number): Promise<IterationResult> {
  const { ctx, request, sessionId, key, n } = run;
  const current = plan[index]!;
  const { state } = run.ask;
  const toolSet = ctx.registry.offer(run.ask);
  run.result.toolSet = toolSet;
  ctx.events.toolsOffered(toolSet);
  const previousResults = current.depends_on.flatMap((dep) => {
    const result = plan[dep]?.result ?? '';
    return dep >= 0 && dep < plan.length && result ? [{ index: dep, result }] : [];
  });
  const started = performance.now();
  const reply = await callTemplate(
    ctx.prompt,
    PLAN_STEP_EXECUTE_TEMPLATE,
    {
      goal: current.goal,
      previous_results: previousResults,
      tools: toolSet.tools.map((t) => ({
        name: t.name,
        description: t.description,
        arguments: t.arguments.map((a) => ({ name: a.name, type: a.type, description: a.description })),
      })),
    },
    ctx.orchestration.usage,
  );
  ctx.events.llmFinished((performance.now() - started) / 1000);
  const call = reply.value !== null && typeof reply.value === 'object' && !Array.isArray(reply.value) ? (reply.value as Record<string, unknown>) : {};
  const toolName = typeof call.tool === 'string' ? call.tool : '';
  const rawArgs = call.arguments;
  const args = rawArgs !== null && typeof rawArgs === 'object' && !Array.isArray(rawArgs) ? (rawArgs as Record<string, unknown>) : {};

  await ctx.output.respond(thoughtResponse(`Step ${index}: ${current.goal} → calling ${toolName}`, provenanceUris.thought(key, n), true));

  let observation: string;
  // The `next` request carries the state as the client sent it unless a tool moved it.
  let nextState = request.state;
  let stateAfter = state;
  let ok: boolean;
  if (!toolSet.has(toolName)) {
    // Refused before it runs: the tool is not offered for these groups in the state this step runs in.
    const { maxReplanDepth } = patternLimits(ctx.catalog, planThenExecute.id);
    const then = replansUsed(request.history) < maxReplanDepth ? 'replan' : 'observation';
    ctx.events.planStepRefused({ tool: toolName, step: index, state, at: 'step', then });
    ctx.events.actionDenied(toolName, toolSet, ctx.registry.get(toolName) !== undefined);
    observation = `Error: plan step ${index} was refused: ${stepRefusal(toolName, toolSet.names, state)}`;
    ok = false;
  } else {
    // The tool's sub-trace derives from this step's result entity, as in TrustGraph's orchestrator.
    const action = { kind: 'action', thought: '', name: toolName, args } as const;
    const outcome = await act(ctx, action, toolSet, state, patternUris.stepResult(key, index));
    observation = outcome.observation.trim();
    // Without a transition the request's state goes on as it came (TrustGraph's plan steps never change it).
    if (outcome.nextState !== state) nextState = stateAfter = outcome.nextState;
    ok = outcome.ok;
  }
  run.result.action = toolName;

  await ctx.output.respond(observationResponse(observation, provenanceUris.observation(key, n)));
  plan[index] = makePlanStep({ ...current, status: ok ? 'completed' : 'failed', result: observation });
  const document = saveDocument(ctx, { id: patternDocumentIds.stepResult(key, index), title: `Step result: ${current.goal.slice(0, 60)}`, content: observation });
  await explain(ctx, request, patternUris.stepResult(key, index), stepResultTriples(key, index, current.goal, document));

  const step = makeAgentStep({
    thought: `Executing plan step ${index}: ${current.goal}`,
    action: toolName,
    arguments: stringifyArguments(args),
    observation,
    step_type: 'execute',
    plan,
  });
  await ctx.output.next(nextAgentRequest(request, sessionId, nextState, [...request.history, step]));
  return { ...run.result, outcome: 'next', stateAfter };
}

function stepRefusal(tool: string, offered: readonly string[], state: string): string {
  const available = offered.length > 0 ? `Available tools: ${offered.join(', ')}.` : 'No tools are available.';
  return `the tool "${tool}" is not available in this conversation's groups and the state "${state}"; it was not called. ${available}`;
}

async function synthesis(run: Run, plan: PlanStep[]): Promise<IterationResult> {
  const { ctx, request, key } = run;
  await ctx.output.respond(thoughtResponse('Synthesising final answer from plan results', '', true));
  const messageId = patternUris.synthesis(key);
  const started = performance.now();
  const answer = await callTemplateText(
    ctx.prompt,
    PLAN_SYNTHESISE_TEMPLATE,
    { question: request.question, framing: request.framing, steps: plan.map((s, i) => ({ index: i, goal: s.goal, result: s.result })) },
    ctx.orchestration.usage,
    request.streaming && !isSubagent(request),
    (chunk) => ctx.output.respond(answerResponse(chunk, messageId, { message: false, dialog: false })),
  );
  ctx.events.llmFinished((performance.now() - started) / 1000);
  const document = saveDocument(ctx, { id: patternDocumentIds.synthesis(key), title: 'Synthesis', content: answer });
  await explain(ctx, request, messageId, synthesisTriples(key, [patternUris.stepResult(key, plan.length - 1)], 'plan-complete', document));
  ctx.events.sessionEnded('completed', run.n);
  if (isSubagent(request)) {
    await ctx.output.next(makeAgentRequest(subagentCompletion(request, answer)));
    return { ...run.result, outcome: 'next' };
  }
  const content = request.streaming ? '' : answer;
  await ctx.output.respond({ ...answerResponse(content, messageId, { message: true, dialog: true }), ...ctx.orchestration.usage.fields() });
  return { ...run.result, outcome: 'answer', stateAfter: run.ask.state };
}
