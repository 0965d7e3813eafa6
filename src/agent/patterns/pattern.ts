/**
 * An orchestration pattern, as a plug-in: TrustGraph's `pattern` field of an AgentRequest names one. The
 * dispatcher (dispatch.ts) picks it from the table (pattern-table.ts) by its `id`, gives it the context of this
 * message, and turns whatever it throws into the dialog's error response. A pattern knows nothing of the others.
 */
import type { AgentAsk } from '../../groups/index.js';
import type { IterationContext, IterationResult } from '../iteration.js';
import type { PatternCatalog } from '../orchestrator/catalog.js';
import type { OrchestrationContext } from '../orchestration-fields.js';

/** What every pattern's iteration gets: the iteration's context plus the workspace's pattern catalog and this message's orchestration state. */
export interface PatternContext extends IterationContext {
  readonly catalog: PatternCatalog;
  readonly orchestration: OrchestrationContext;
}

export interface Pattern {
  /** The `pattern` value that selects it (`react`, `plan-then-execute`, `supervisor`, …). */
  readonly id: string;
  /**
   * Run one consumed request of a conversation this pattern runs: publish its messages through `ctx.output`
   * (responses, the `next` request, explain triples) and return `result` filled in. It may throw: the caller
   * answers the dialog with an error response.
   */
  run(ctx: PatternContext, ask: AgentAsk, result: IterationResult): Promise<IterationResult>;
}
