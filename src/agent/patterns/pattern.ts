/**
 * What every pattern iteration gets: the ReAct iteration's context (registry, prompt client, tool clients,
 * output, events, settings) plus the workspace's pattern catalog and the orchestration state of this message.
 */
import type { IterationContext } from '../iteration.js';
import type { PatternCatalog } from '../orchestrator/catalog.js';
import type { OrchestrationContext } from '../orchestration-fields.js';

export interface PatternContext extends IterationContext {
  readonly catalog: PatternCatalog;
  readonly orchestration: OrchestrationContext;
}
