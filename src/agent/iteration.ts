/**
 * One ReAct iteration: one AgentRequest message in, its responses and (after a tool ran) the `next`
 * AgentRequest out (docs/trustgraph-agent-notes.md §3.1). The service keeps no conversation state: everything travels in the
 * request's history, so any replica can take any iteration.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { RequestClient } from '../bus/request-client.js';
import type { ToolRegistry } from '../tools/registry/registry.js';
import type { ToolClients } from '../tools/run/tool-clients.js';
import type { AgentAsk } from '../groups/selection.js';
import type { Tool } from '../tools/tool.js';
import type { ToolSet } from '../tools/registry/tool-set.js';
import {
  dumpJsonOnce,
  makeAgentRequest,
  agentStepOf,
  triplesOf,
  type AgentRequest,
  type AgentResponse,
  type AgentStep,
  type PromptRequest,
  type PromptResponse,
  type Triple,
  type Triples,
} from '../wire/index.js';
import {
  conclusionTriples,
  iterationTriples,
  observationTriples,
  provenanceUris,
  sessionTriples,
  sessionUriKey,
} from './explainability.js';
import { MaxIterationsError } from './errors.js';
import { describeFailure } from './failure.js';
import { agentDocuments, type AgentDocument, type DocumentSink } from './agent-documents.js';
import { agentReactTerms } from './prompt-terms.js';
import { PARSE_ERROR_ACTION, parseFailureObservation, type ParsedResponse } from './react-output.js';
import { act, stringifyArguments, type ActionOutcome } from './tool-action.js';
import { reason } from './reasoning.js';
import { ThoughtStream } from './thought-stream.js';
import { answerResponse, errorResponse, explainResponse, observationResponse, thoughtResponse } from './responses.js';
import { UsageTracker } from './usage.js';
import { isSubagent, nextAgentRequest, SUBAGENT_COMPLETION, subagentCompletion, type OrchestrationContext } from './orchestration-fields.js';
import type { FanInKind } from './orchestrator/fan-in-messages.js';

/** Where one iteration's messages go; the caller adds the `id` property (and any signature). */
export interface IterationOutput {
  respond(response: AgentResponse): Promise<void>;
  next(request: AgentRequest): Promise<void>;
  /** Whether `next` can carry this request (signed, encoded) in one message of the transport. */
  fitsNext?(request: AgentRequest): boolean;
  /** Absent when the flow has no `explainability` queue. */
  explain?(triples: Triples): Promise<void>;
  /** Librarian documents of thoughts, observations and answers; absent when the flow has no librarian queues. */
  documents?: DocumentSink;
  /** The supervisor's aggregation topic (patterns/fan-in-messages.ts), keyed by the request's `correlation_id`. */
  aggregate?(kind: FanInKind, request: AgentRequest): Promise<void>;
}

export type SessionOutcome = 'completed' | 'error' | 'max-iterations';

/**
 * What happens to arguments the model adds beyond a tool's declared ones (`--undeclared-arguments`):
 * `drop` them before the call (default), `pass` them on (TrustGraph's behaviour), or `reject` the call.
 * Tools that declare no arguments receive whatever the model wrote, as in TrustGraph.
 */
export type UndeclaredArguments = 'drop' | 'pass' | 'reject';

/** What was done with a call's undeclared arguments. */
export type UndeclaredAction = 'dropped' | 'passed' | 'rejected';

/** What happened in an iteration, for metrics and the audit trail. Every method is required (`noTelemetry` records nothing). */
export interface IterationEvents {
  toolsOffered(toolSet: ToolSet): void;
  llmFinished(seconds: number): void;
  /** The model named a tool it was not offered (hiding is not blocking, design decision 6 (docs/design.md)). */
  actionDenied(name: string, toolSet: ToolSet, known: boolean): void;
  argumentsInvalid(tool: Tool, problems: readonly string[]): void;
  /** The model gave arguments the tool does not declare. */
  argumentsUndeclared(tool: Tool, names: readonly string[], action: UndeclaredAction): void;
  toolFinished(tool: Tool, seconds: number, error: string | undefined): void;
  stateTransition(tool: Tool, from: string, to: string): void;
  sessionEnded(outcome: SessionOutcome, iterations: number): void;
  /** The orchestrator runs this request with `pattern` (`routed`: the meta-router chose it). */
  patternChosen(pattern: string, taskType: string, routed: boolean, fallbacks: readonly string[]): void;
  /** A plan-then-execute plan was made (`replan` 0 for the first plan). */
  planCreated(steps: number, replan: number): void;
  /** A plan step named a tool not offered for the request's groups and that step's state; it did not run. */
  planStepRefused(refusal: PlanStepRefusal): void;
  /** A supervisor fanned out this many subagents. */
  subagentsFannedOut(count: number): void;
}

/** A refused plan step, for the metric and the audit line. */
export interface PlanStepRefusal {
  readonly tool: string;
  readonly step: number;
  /** The state the step would have run in. */
  readonly state: string;
  /** `plan`: refused when the plan was made; `step`: refused when the step was about to run. */
  readonly at: 'plan' | 'step';
  /** What happened instead: a new plan, or the step ended with the refusal as its result. */
  readonly then: 'replan' | 'observation';
}

export interface IterationContext {
  workspace: string;
  flow: string;
  registry: ToolRegistry;
  prompt: RequestClient<PromptRequest, PromptResponse>;
  tools: ToolClients;
  output: IterationOutput;
  events: IterationEvents;
  logger: Logger;
  settings: {
    maxIterations: number;
    /** An action outside the offered set ends the dialog ("No action for X!") instead of becoming an observation. */
    strictTools: boolean;
    /** Default `drop`. */
    undeclaredArguments?: UndeclaredArguments;
  };
  now?: () => Date;
  /** The workspace's `additional-context` (config type `--config-type`, default `agent`), TrustGraph's model context. */
  additionalContext?: string;
  /** Set when the orchestrator runs this iteration as its `react` pattern (patterns/dispatch.ts). */
  orchestration?: OrchestrationContext;
}

export interface IterationResult {
  /**
   * `answer`: the dialog ended with an answer; `next`: a next request was published; `error`: an error response;
   * `unanswered`: not even an error response could be published (the request was negatively acknowledged).
   */
  outcome: 'answer' | 'next' | 'error' | 'unanswered';
  /** The tool set offered to the model (absent if the iteration failed before filtering). */
  toolSet?: ToolSet;
  stateBefore: string;
  stateAfter?: string;
  action?: string;
  error?: string;
}

/**
 * Run one iteration. Failures become an error response (and are returned); it throws only when that error
 * response cannot be published either (the broker stayed unreachable).
 */
export async function runIteration(ctx: IterationContext, ask: AgentAsk): Promise<IterationResult> {
  return withErrorResponse(ctx, ask, (result) => iterate(ctx, ask, result));
}

/**
 * Run one iteration of any pattern: a failure becomes the dialog's error response (and is returned); it
 * throws only when that error response cannot be published either.
 */
export async function withErrorResponse(
  ctx: IterationContext,
  ask: AgentAsk,
  run: (result: IterationResult) => Promise<IterationResult>,
): Promise<IterationResult> {
  const { request } = ask;
  const result: IterationResult = { outcome: 'error', stateBefore: ask.state };
  try {
    return await run(result);
  } catch (error) {
    // The error goes back to the client in one message: bounded, and saying what really happened.
    const { reason, text: message } = describeFailure(error);
    ctx.logger.warn({ err: error, reason, workspace: ctx.workspace, flow: ctx.flow }, `Agent iteration failed: ${message}`);
    // Reaching the iteration limit was already counted as its own session outcome.
    if (!(error instanceof MaxIterationsError)) {
      ctx.events.sessionEnded('error', request.history.length + 1);
    }
    if (isSubagent(request) && !request.history.some((h) => h.step_type === SUBAGENT_COMPLETION) && ctx.output.aggregate) {
      // A failed subagent still reports to its supervisor, so the client gets one final message: the synthesis.
      await ctx.output.next(makeAgentRequest(subagentCompletion(request, `Error: ${message}`)));
      return { ...result, outcome: 'next', error: message };
    }
    await ctx.output.respond(errorResponse(message));
    return { ...result, outcome: 'error', error: message };
  }
}

/**
 * One ReAct iteration, as a sequence of steps: open the session's iteration, offer the tools, ask the model,
 * then either finish the dialog with its answer or run its action and hand the conversation on.
 */
async function iterate(ctx: IterationContext, ask: AgentAsk, result: IterationResult): Promise<IterationResult> {
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
  const sessionId = request.session_id || randomUUID();
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

export function saveDocument(ctx: Pick<IterationContext, 'output'>, document: AgentDocument): string | undefined {
  if (!ctx.output.documents || document.content === '') return undefined;
  return ctx.output.documents.save(document);
}

/**
 * Publish provenance triples and the inline explain response, from one list of triples built once. Provenance
 * never fails a dialog: what does not fit is shortened or left out by the output.
 */
export async function explain(ctx: Pick<IterationContext, 'output' | 'logger'>, request: AgentRequest, entity: string, triples: Triple[]): Promise<void> {
  // Both messages carry the same triples: serialised once, for both.
  const shared = dumpJsonOnce(triples);
  if (ctx.output.explain) {
    try {
      await ctx.output.explain(triplesOf({ id: entity, root: '', collection: request.collection }, shared));
    } catch (error) {
      ctx.logger.warn({ err: error, entity }, 'Could not publish explainability triples; the dialog goes on');
    }
  }
  await ctx.output.respond(explainResponse(entity, shared));
}

/** TrustGraph's `context` of the `agent-react` prompt: additional context, then framing; null when neither. */
export function modelContext(additional: string | undefined, framing: string): string | null {
  if (additional && framing) return `${additional}\n\n${framing}`;
  return additional || framing || null;
}
