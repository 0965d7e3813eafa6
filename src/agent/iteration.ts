/**
 * One ReAct iteration: one AgentRequest message in, its responses and (after a tool ran) the `next`
 * AgentRequest out (docs/trustgraph-agent-notes.md §3.1). The service keeps no conversation state: everything travels in the
 * request's history, so any replica can take any iteration.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { RequestClient } from '../bus/request-client.js';
import type { ToolRegistry } from '../tools/registry/registry.js';
import { runTool } from '../tools/run/run-tool.js';
import type { SubTrace } from '../tools/run/sub-trace.js';
import type { ToolClients } from '../tools/run/tool-clients.js';
import type { AgentAsk } from '../tools/registry/selection.js';
import type { Tool } from '../tools/tool.js';
import type { ToolSet } from '../tools/registry/tool-set.js';
import {
  dumpJsonOnce,
  makeAgentRequest,
  agentStepOf,
  pythonStr,
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
import { DialogError, MaxIterationsError } from './errors.js';
import { describeFailure } from './failure.js';
import { agentDocuments, type AgentDocument, type DocumentSink } from './agent-documents.js';
import { agentReactTerms } from './prompt-terms.js';
import { PARSE_ERROR_ACTION, parseFailureObservation, type ParsedAction, type ParsedResponse } from './react-output.js';
import { reason } from './reasoning.js';
import { ThoughtStream } from './thought-stream.js';
import { answerResponse, errorResponse, explainResponse, observationResponse, thoughtResponse } from './responses.js';
import { UsageTracker } from './patterns/usage.js';
import { isSubagent, nextAgentRequest, SUBAGENT_COMPLETION, subagentCompletion, type OrchestrationContext } from './patterns/orchestration.js';
import { errorMessage } from '../errors/error-text.js';
import type { FanInKind } from './patterns/fan-in-messages.js';

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

/** What happened in an iteration, for metrics and the audit trail. Every method is optional. */
export interface IterationEvents {
  toolsOffered?(toolSet: ToolSet): void;
  llmFinished?(seconds: number): void;
  /** The model named a tool it was not offered (hiding is not blocking, design decision 6 (docs/design.md)). */
  actionDenied?(name: string, toolSet: ToolSet, known: boolean): void;
  argumentsInvalid?(tool: Tool, problems: readonly string[]): void;
  /** The model gave arguments the tool does not declare. */
  argumentsUndeclared?(tool: Tool, names: readonly string[], action: UndeclaredAction): void;
  toolFinished?(tool: Tool, seconds: number, error: string | undefined): void;
  stateTransition?(tool: Tool, from: string, to: string): void;
  sessionEnded?(outcome: SessionOutcome, iterations: number): void;
  /** The orchestrator runs this request with `pattern` (`routed`: the meta-router chose it). */
  patternChosen?(pattern: string, taskType: string, routed: boolean, fallbacks: readonly string[]): void;
  /** A plan-then-execute plan was made (`replan` 0 for the first plan). */
  planCreated?(steps: number, replan: number): void;
  /** A plan step named a tool not offered for the request's groups and that step's state; it did not run. */
  planStepRefused?(refusal: PlanStepRefusal): void;
  /** A supervisor fanned out this many subagents. */
  subagentsFannedOut?(count: number): void;
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
      ctx.events.sessionEnded?.('error', request.history.length + 1);
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

async function iterate(ctx: IterationContext, ask: AgentAsk, result: IterationResult): Promise<IterationResult> {
  const { request } = ask;
  const now = ctx.now ?? (() => new Date());
  const sessionId = request.session_id || randomUUID();
  // Message ids and explain URIs name the conversation by a bounded key; the `next` request keeps the full id.
  const uriKey = sessionUriKey(sessionId);
  if (uriKey !== sessionId) {
    ctx.logger.warn({ sessionIdLength: sessionId.length, uriKey }, 'Session id too long for message ids and URIs; using its digest there');
  }
  const n = request.history.length + 1;
  const state = result.stateBefore;

  const orchestration = ctx.orchestration;
  if (n === 1) {
    const triples = sessionTriples(uriKey, request.question, now(), orchestration?.sessionParentUri);
    await explain(ctx, request, provenanceUris.session(uriKey), triples);
  }
  const firstDerivedFrom = orchestration?.patternDecisionUri;
  const usage = orchestration?.usage ?? new UsageTracker();

  if (request.history.length >= ctx.settings.maxIterations) {
    ctx.events.sessionEnded?.('max-iterations', ctx.settings.maxIterations);
    throw new MaxIterationsError();
  }

  const toolSet = ctx.registry.offer(ask);
  result.toolSet = toolSet;
  ctx.events.toolsOffered?.(toolSet);

  const thoughtId = provenanceUris.thought(uriKey, n);
  const finalId = provenanceUris.final(uriKey);
  // Streamed thoughts keep TrustGraph's shape: a held-back tail, `end_of_message` on the last chunk.
  const thoughts = new ThoughtStream();
  const sendThought = async (text: string | undefined, end: boolean): Promise<void> => {
    if (text !== undefined) await ctx.output.respond(thoughtResponse(text, thoughtId, end));
  };
  const started = performance.now();
  // The `agent-react` call's own usage, for the iteration's explain entity (the tracker sums the message's calls).
  let call: Pick<PromptResponse, 'in_token' | 'out_token' | 'model'> | undefined;
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
  ctx.events.llmFinished?.(llmMs / 1000);

  if (!request.streaming) await ctx.output.respond(thoughtResponse(parsed.thought, thoughtId, true));

  if (parsed.kind === 'final') {
    const answerDocument = saveDocument(ctx, agentDocuments.answer(uriKey, request.question, parsed.answer));
    const reason = orchestration?.terminationReasons ? 'final-answer' : undefined;
    await explain(ctx, request, finalId, conclusionTriples(uriKey, n, answerDocument, firstDerivedFrom, reason));
    if (isSubagent(request)) {
      // A subagent's answer goes back to its supervisor for aggregation, not to the client.
      await ctx.output.next(makeAgentRequest(subagentCompletion(request, parsed.answer)));
      ctx.events.sessionEnded?.('completed', n);
      return { ...result, outcome: 'next', stateAfter: state };
    }
    const content = request.streaming ? '' : parsed.answer;
    await ctx.output.respond({
      ...answerResponse(content, finalId, { message: true, dialog: true }),
      ...usage.fields(),
    });
    ctx.events.sessionEnded?.('completed', n);
    return { ...result, outcome: 'answer', stateAfter: state };
  }

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
  await explain(ctx, request, iterationUri, iterationTriples(uriKey, n, action, modelArgs, thoughtDocument, firstDerivedFrom, measures));

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
  await ctx.output.next(nextAgentRequest(request, sessionId, parsed.kind === 'action' ? step.nextState : request.state, history));
  return { ...result, outcome: 'next', action, stateAfter: step.nextState };
}

export interface ActionOutcome {
  observation: string;
  nextState: string;
  /** The tool ran and succeeded. */
  ok: boolean;
  /** How long the tool ran, in milliseconds; 0 when it was not called. */
  toolMs: number;
  /** Why the step did not succeed (the tool's error, or why it was not called). */
  error?: string;
  /** The last explain entity of the tool's sub-trace, when it sent one. */
  subTrace?: string;
}

/** Longest explain id of a tool's sub-trace that is handed on (graph RAG's are `urn:trustgraph:question:<uuid>`). */
const MAX_SUB_TRACE_ID = 1024;

/** The outcome of a call that never reached the tool: the observation says why. */
function refused(observation: string, state: string): ActionOutcome {
  return { observation, nextState: state, ok: false, toolMs: 0, error: observation.replace(/^Error: /, '') };
}

/**
 * Enforce the offered set, validate the arguments, run the tool; the state moves only on success. With
 * `traceParent` (orchestrated iterations) the explain trace of the tool's service is forwarded to the client,
 * as TrustGraph's orchestrator does, deriving from `traceParent`.
 */
export async function act(
  ctx: IterationContext,
  action: ParsedAction,
  toolSet: ToolSet,
  state: string,
  traceParent?: string,
): Promise<ActionOutcome> {
  const tool = toolSet.get(action.name);
  if (!tool) {
    ctx.events.actionDenied?.(action.name, toolSet, ctx.registry.get(action.name) !== undefined);
    if (ctx.settings.strictTools) throw new DialogError(`No action for ${action.name}!`);
    return refused(notOfferedObservation(action.name, toolSet), state);
  }

  const validation = tool.validator.validate(action.args);
  // The validator reports each argument the tool does not declare as a warning naming it.
  const undeclared = validation.warnings.flatMap((w) => (w.argument === null ? [] : [w.argument]));
  const mode = ctx.settings.undeclaredArguments ?? 'drop';
  if (undeclared.length > 0) {
    ctx.events.argumentsUndeclared?.(tool, undeclared, mode === 'drop' ? 'dropped' : mode === 'pass' ? 'passed' : 'rejected');
  }
  if (!validation.ok || (mode === 'reject' && undeclared.length > 0)) {
    const problems = [
      ...(validation.ok ? [] : validation.errors.map((e) => e.message)),
      ...(mode === 'reject' ? validation.warnings.map((w) => w.message) : []),
    ];
    ctx.events.argumentsInvalid?.(tool, problems);
    return refused(
      `Error: invalid arguments for tool "${tool.name}": ${problems.join('; ')}. The tool was not called; fix the arguments and try again.`,
      state,
    );
  }

  let subTrace: string | undefined;
  const trace: SubTrace | undefined = traceParent === undefined ? undefined : {
    parentUri: traceParent,
    async explain(event) {
      // The id is the service's: one too long for a message (and for our triples) is not handed on.
      if (event.explainId.length > MAX_SUB_TRACE_ID) {
        ctx.logger.warn({ tool: tool.name, idLength: event.explainId.length }, 'Sub-trace explain id too long; not forwarded');
        return;
      }
      subTrace = event.explainId;
      await ctx.output.respond(explainResponse(event.explainId, [...event.triples], event.explainGraph));
    },
  };
  const traced = (): { subTrace?: string } => (subTrace !== undefined ? { subTrace } : {});
  const started = performance.now();
  try {
    const args = mode === 'drop' && undeclared.length > 0 ? withoutKeys(validation.value, undeclared) : validation.value;
    const observation = await runTool(tool, args, ctx.tools, trace);
    const toolMs = performance.now() - started;
    ctx.events.toolFinished?.(tool, toolMs / 1000, undefined);
    const next = ctx.registry.nextState(tool, state);
    if (next !== state) ctx.events.stateTransition?.(tool, state, next);
    return { observation, nextState: next, ok: true, toolMs, ...traced() };
  } catch (error) {
    const toolMs = performance.now() - started;
    const message = errorMessage(error);
    ctx.events.toolFinished?.(tool, toolMs / 1000, message);
    ctx.logger.info({ tool: tool.name, workspace: ctx.workspace, err: error }, `Tool failed: ${message}`);
    return { observation: `Error: ${message}`.trim(), nextState: state, ok: false, toolMs, error: message, ...traced() };
  }
}

function withoutKeys(args: Readonly<Record<string, unknown>>, names: readonly string[]): Record<string, unknown> {
  const drop = new Set(names);
  // fromEntries defines own properties, so a "__proto__" argument stays a plain key.
  return Object.fromEntries(Object.entries(args).filter(([name]) => !drop.has(name)));
}

export function notOfferedObservation(name: string, toolSet: ToolSet): string {
  if (toolSet.names.length === 0) {
    return `Error: tool "${name}" is not available, and no tools are available in this conversation's groups and state. Answer with "Final Answer:".`;
  }
  return `Error: tool "${name}" is not available in this conversation's groups and state. Available tools: ${toolSet.names.join(', ')}.`;
}

/** History arguments are a string map: each value as Python's `str()` would write it (docs/trustgraph-agent-notes.md §3.7). */
export function stringifyArguments(args: Readonly<Record<string, unknown>>): Record<string, string> {
  return Object.fromEntries(Object.entries(args).map(([name, value]) => [name, pythonStr(value)]));
}

/**
 * Hand a document to the librarian saver (never waits); its id when the save started, for the explain triples to
 * link. Empty text is not saved, as in TrustGraph.
 */
export function saveDocument(ctx: Pick<IterationContext, 'output'>, document: AgentDocument): string | undefined {
  if (!ctx.output.documents || document.content === '') return undefined;
  return ctx.output.documents.save(document) ? document.id : undefined;
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
