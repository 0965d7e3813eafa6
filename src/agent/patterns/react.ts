/**
 * ReAct (TrustGraph's `react` pattern, and its ReAct agent): one iteration offers the request's tools, asks the
 * model through the `agent-react` prompt, and either ends the dialog with the model's answer or runs the action
 * it chose and hands the conversation on in the `next` request (docs/trustgraph-agent-notes.md §3.1).
 */
import type { AgentAsk } from '../../groups/index.js';
import type { ToolSet } from '../../tools/index.js';
import { makeAgentRequest, agentStepOf, type AgentRequest, type AgentStep, type PromptResponse } from '../../wire/index.js';
import {
  conclusionTriples,
  iterationTriples,
  observationTriples,
  provenanceUris,
  sessionTriples,
  sessionUriKey,
} from '../explainability.js';
import { MaxIterationsError } from '../errors.js';
import { agentDocuments } from '../agent-documents.js';
import { explain, saveDocument, type IterationContext, type IterationResult } from '../iteration.js';
import { agentReactTerms } from '../prompt-terms.js';
import { PARSE_ERROR_ACTION, parseFailureObservation, type ParsedResponse } from '../react-output.js';
import { act, stringifyArguments, type ActionOutcome } from '../tool-action.js';
import { reason } from '../reasoning.js';
import { ThoughtStream } from '../thought-stream.js';
import { answerResponse, observationResponse, thoughtResponse } from '../responses.js';
import { UsageTracker } from '../usage.js';
import { isSubagent, nextAgentRequest, subagentCompletion, type OrchestrationContext } from '../orchestration-fields.js';
import type { Pattern } from './pattern.js';
import { sessionIdOf } from '../session-id.js';

export const react: Pattern = {
  id: 'react',
  run: (ctx, ask, result) => reactIteration(ctx, ask, result),
};

/**
 * One ReAct iteration, as a sequence of steps: open the session's iteration, offer the tools, ask the model,
 * then either finish the dialog with its answer or run its action and hand the conversation on. Outside the
 * orchestrator (`ctx.orchestration` unset) it is TrustGraph's ReAct agent's iteration, without the
 * orchestrator's measures and termination reasons.
 */
export async function reactIteration(ctx: IterationContext, ask: AgentAsk, result: IterationResult): Promise<IterationResult> {
  const turn = await openTurn(ctx, ask, result);
  const toolSet = ctx.registry.offer(ask);
  result.toolSet = toolSet;
  ctx.events.toolsOffered(toolSet);
  const reply = await askModel(ctx, turn, toolSet);
  const { parsed } = reply;
  if (parsed.kind === 'final') return finish(ctx, turn, result, parsed.answer);
  return takeAction(ctx, turn, result, toolSet, { ...reply, parsed });
}

/** What every step of one iteration needs to know about it. */
interface Turn {
  readonly request: AgentRequest;
  readonly sessionId: string;
  /** The session's name in message ids and explain URIs (a digest when the id is too long). */
  readonly uriKey: string;
  /** The iteration's number, 1 for the first. */
  readonly n: number;
  readonly state: string;
  readonly orchestration: OrchestrationContext | undefined;
  readonly firstDerivedFrom: string | undefined;
  readonly usage: UsageTracker;
  readonly thoughtId: string;
  readonly finalId: string;
}

interface ModelReply {
  readonly parsed: ParsedResponse;
  readonly llmMs: number;
  /** The `agent-react` call's own usage, for the iteration's explain entity (the tracker sums the message's calls). */
  readonly call: Pick<PromptResponse, 'in_token' | 'out_token' | 'model'> | undefined;
}

/** Name the iteration, explain the session on its first one, and stop at the iteration limit. */
async function openTurn(ctx: IterationContext, ask: AgentAsk, result: IterationResult): Promise<Turn> {
  const { request } = ask;
  const now = ctx.now ?? (() => new Date());
  const sessionId = sessionIdOf(request, ctx.events);
  // Message ids and explain URIs name the conversation by a bounded key; the `next` request keeps the full id.
  const uriKey = sessionUriKey(sessionId);
  if (uriKey !== sessionId) {
    ctx.logger.warn({ sessionIdLength: sessionId.length, uriKey }, 'Session id too long for message ids and URIs; using its digest there');
  }
  const n = request.history.length + 1;
  const orchestration = ctx.orchestration;
  if (n === 1) {
    const triples = sessionTriples(uriKey, request.question, now(), orchestration?.sessionParentUri);
    await explain(ctx, request, provenanceUris.session(uriKey), triples);
  }
  if (request.history.length >= ctx.settings.maxIterations) {
    ctx.events.sessionEnded('max-iterations', ctx.settings.maxIterations);
    throw new MaxIterationsError();
  }
  return {
    request,
    sessionId,
    uriKey,
    n,
    state: result.stateBefore,
    orchestration,
    firstDerivedFrom: orchestration?.patternDecisionUri,
    usage: orchestration?.usage ?? new UsageTracker(),
    thoughtId: provenanceUris.thought(uriKey, n),
    finalId: provenanceUris.final(uriKey),
  };
}

/** The `agent-react` prompt call, its thoughts (and a streamed answer) passed to the client as they come. */
async function askModel(ctx: IterationContext, turn: Turn, toolSet: ToolSet): Promise<ModelReply> {
  const { request, usage, thoughtId, finalId } = turn;
  // Streamed thoughts keep TrustGraph's shape: a held-back tail, `end_of_message` on the last chunk.
  const thoughts = new ThoughtStream();
  const sendThought = async (text: string | undefined, end: boolean): Promise<void> => {
    if (text !== undefined) await ctx.output.respond(thoughtResponse(text, thoughtId, end));
  };
  const started = performance.now();
  let call: ModelReply['call'];
  const parsed: ParsedResponse = await reason({
    client: ctx.prompt,
    // TrustGraph's orchestrator hands the workspace's additional context and the task type's framing to the
    // model as the prompt's `context`, the framing after a blank line.
    terms: agentReactTerms(request.question, toolSet, request.history, modelContext(ctx.additionalContext, request.framing)),
    streaming: request.streaming,
    onEvent: async (event) => {
      if (event.type === 'thought') {
        thoughts.add(event.text);
        if (event.final) await sendThought(thoughts.end(), true);
      } else {
        await ctx.output.respond(answerResponse(event.text, finalId, { message: false, dialog: false }));
      }
    },
    onChunkEnd: (heldBack) => sendThought(thoughts.release(heldBack), false),
    usage: {
      track(response) {
        usage.track(response);
        call = response;
      },
    },
  });
  const llmMs = performance.now() - started;
  ctx.events.llmFinished(llmMs / 1000);
  if (!request.streaming) await ctx.output.respond(thoughtResponse(parsed.thought, thoughtId, true));
  return { parsed, llmMs, call };
}

/** The model answered: save and explain the answer, then end the dialog (a subagent reports to its supervisor). */
async function finish(ctx: IterationContext, turn: Turn, result: IterationResult, answer: string): Promise<IterationResult> {
  const { request, uriKey, n, state, finalId } = turn;
  const answerDocument = saveDocument(ctx, agentDocuments.answer(uriKey, request.question, answer));
  const reason = turn.orchestration?.terminationReasons ? 'final-answer' : undefined;
  await explain(ctx, request, finalId, conclusionTriples(uriKey, n, answerDocument, turn.firstDerivedFrom, reason));
  if (isSubagent(request)) {
    // A subagent's answer goes back to its supervisor for aggregation, not to the client.
    await ctx.output.next(makeAgentRequest(subagentCompletion(request, answer)));
    ctx.events.sessionEnded('completed', n);
    return { ...result, outcome: 'next', stateAfter: state };
  }
  const content = request.streaming ? '' : answer;
  await ctx.output.respond({
    ...answerResponse(content, finalId, { message: true, dialog: true }),
    ...turn.usage.fields(),
  });
  ctx.events.sessionEnded('completed', n);
  return { ...result, outcome: 'answer', stateAfter: state };
}

/**
 * The model chose an action (or wrote something unreadable): explain the iteration, run the tool if it may,
 * pass on the observation, and publish the `next` request with the step added to the history.
 */
async function takeAction(
  ctx: IterationContext,
  turn: Turn,
  result: IterationResult,
  toolSet: ToolSet,
  { parsed, llmMs, call }: ModelReply & { parsed: Exclude<ParsedResponse, { kind: 'final' }> },
): Promise<IterationResult> {
  const { request, uriKey, n, state, orchestration } = turn;
  const action = parsed.kind === 'action' ? parsed.name : PARSE_ERROR_ACTION;
  const modelArgs = parsed.kind === 'action' ? parsed.args : {};
  // A parse failure has no thought to save (TrustGraph's parse-error action carries an empty thought).
  const thoughtDocument =
    parsed.kind === 'action' ? saveDocument(ctx, agentDocuments.thought(uriKey, n, action, parsed.thought)) : undefined;
  // Orchestrated iterations carry TrustGraph's orchestrator's measures; its ReAct agent's carry none.
  const measures = orchestration && {
    toolCandidates: toolSet.names,
    llmDurationMs: Math.trunc(llmMs),
    inToken: call?.in_token ?? null,
    outToken: call?.out_token ?? null,
    model: call?.model ?? null,
  };
  const iterationUri = provenanceUris.iteration(uriKey, n);
  await explain(ctx, request, iterationUri, iterationTriples(uriKey, n, action, modelArgs, thoughtDocument, turn.firstDerivedFrom, measures));

  const step: ActionOutcome =
    parsed.kind === 'action'
      ? await act(ctx, parsed, toolSet, state, orchestration && iterationUri)
      : { observation: parseFailureObservation(parsed), nextState: state, ok: false, toolMs: 0, error: parsed.message };

  await ctx.output.respond(observationResponse(step.observation, provenanceUris.observation(uriKey, n)));
  const observationDocument = saveDocument(ctx, agentDocuments.observation(uriKey, n, step.observation));
  const observed = orchestration && {
    ...(step.subTrace !== undefined ? { derivedFrom: step.subTrace } : {}),
    toolDurationMs: Math.trunc(step.toolMs),
    ...(step.error !== undefined ? { toolError: step.error } : {}),
  };
  await explain(ctx, request, provenanceUris.observation(uriKey, n), observationTriples(uriKey, n, observationDocument, observed));

  const history: AgentStep[] = [
    ...request.history,
    agentStepOf({
      thought: parsed.thought,
      action,
      arguments: stringifyArguments(modelArgs),
      observation: step.observation,
    }),
  ];
  // An action's next state is normalised already (the registry's); a parse failure keeps the request's state as
  // it came (null too), as TrustGraph does.
  await ctx.output.next(nextAgentRequest(request, turn.sessionId, parsed.kind === 'action' ? step.nextState : request.state, history));
  return { ...result, outcome: 'next', action, stateAfter: step.nextState };
}

/** TrustGraph's `context` of the `agent-react` prompt: additional context, then framing; null when neither. */
export function modelContext(additional: string | undefined, framing: string): string | null {
  if (additional && framing) return `${additional}\n\n${framing}`;
  return additional || framing || null;
}
