/**
 * The explain trace of a service a tool calls (graph RAG's question, exploration, … entities), handed on as it
 * arrives. TrustGraph's orchestrator forwards each of these events to the client as an `explain` response and
 * lets the tool's observation derive from the last one; the service's trace itself derives from `parentUri`.
 */
import type { Triple } from '../../wire/index.js';

export interface SubTraceEvent {
  readonly explainId: string;
  /** The graph the service wrote the entity to (`null` when it named none). */
  readonly explainGraph: string | null;
  readonly triples: readonly Triple[];
}

export interface SubTrace {
  /** The explain entity the service's own trace derives from (its request's `parent_uri`). */
  readonly parentUri: string;
  /** Each explain event of the service, in order. */
  explain(event: SubTraceEvent): Promise<void>;
}
