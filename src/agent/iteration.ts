/**
 * What every pattern's iteration shares: its context (registry, prompt and tool clients, output, events,
 * settings), its result, the error response that ends a dialog whatever failed, and the explain and document
 * outputs. One AgentRequest message in, its responses and (after a tool ran) the `next` AgentRequest out
 * (docs/trustgraph-agent-notes.md §3.1). The service keeps no conversation state: everything travels in the
 * request's history, so any replica can take any iteration. ReAct itself is patterns/react.ts.
 */
import type { Logger } from 'pino';
import type { RequestClient } from '../bus/index.js';
import type { Tool, ToolClients, ToolRegistry, ToolSet } from '../tools/index.js';
import type { AgentAsk } from '../groups/index.js';
import {
  dumpJsonOnce,
  makeAgentRequest,
  triplesOf,
  type AgentRequest,
  type AgentResponse,
  type PromptRequest,
  type PromptResponse,
  type Triple,
  type Triples,
} from '../wire/index.js';
import { MaxIterationsError } from './errors.js';
import { describeFailure } from './failure.js';
import type { AgentDocument, DocumentSink } from './agent-documents.js';
import { errorResponse, explainResponse } from './responses.js';
import { isSubagent, SUBAGENT_COMPLETION, subagentCompletion, type OrchestrationContext } from './orchestration-fields.js';

/** The kinds of message on a supervisor's aggregation topic (orchestrator/fan-in-messages.ts). */
export type FanInKind = 'fan-out' | 'completion' | 'cancel';

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
  /** The supervisor's aggregation topic (orchestrator/fan-in-messages.ts), keyed by the request's `correlation_id`. */
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
  /** The id the conversation goes by: the request's `session_id`, or the one made up on its first iteration. */
  sessionNamed(sessionId: string): void;
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
  /** Set when the orchestrator runs this iteration (patterns/dispatch.ts). */
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
