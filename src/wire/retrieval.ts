/**
 * `trustgraph-base/trustgraph/schema/retrieval.py` + `user_context.py` (TrustGraph 2.11.1): GraphRagQuery /
 * GraphRagResponse. The client reads until `end_of_session`; `explain` messages precede the `chunk` messages.
 * 2.11 added `user_context`, `grounding_seeds`, `graph_seeds`, `languages`, `traversal_instructions` and `graph`
 * to the query; a 2.8 peer's query (without them) decodes to their defaults.
 */
import { z } from 'zod';
import { TripleSchema, errorField } from './primitives.js';
import { bool, defineMessage, list, num, optNum, optRecord, optStr, str, strMap } from './schema-kit.js';

/** `UserContext` and its parts (2.11): who asks, for access-aware retrieval. The agent sends `null`. */
export const AssignmentSchema = z.object({
  resource: str(),
  scope: str(),
  status: str(),
  valid_from: str(),
  valid_to: str(),
  qualifiers: strMap(),
});
export const EntitlementSchema = z.object({
  resource_scope: str(),
  access_level: str(),
  valid_from: str(),
  valid_to: str(),
});
export const OverrideAuthoritySchema = z.object({
  policy_area: str(),
  condition: str(),
});
export const DelegationSchema = z.object({
  delegator_id: str(),
  scope: str(),
});
export const UserContextSchema = z.object({
  user_id: str(),
  roles: list(z.string()),
  assignments: list(AssignmentSchema),
  entitlements: list(EntitlementSchema),
  organisational_units: list(z.string()),
  override_authorities: list(OverrideAuthoritySchema),
  delegation: optRecord(DelegationSchema),
  purpose: str(),
});
export type UserContext = z.output<typeof UserContextSchema>;
export type UserContextInput = z.input<typeof UserContextSchema>;

/** One step of a guided traversal (2.11): which types, relationships and graphs to follow. */
export const TraversalStepSchema = z.object({
  types: list(z.string()),
  relationships: list(z.string()),
  graphs: list(z.string()),
});
export type TraversalStep = z.output<typeof TraversalStepSchema>;

export const GraphRagQuerySchema = z.object({
  query: str(),
  collection: str(),
  /** Limits: 0 = the service's default. */
  entity_limit: num(),
  triple_limit: num(),
  max_subgraph_size: num(),
  max_path_length: num(),
  edge_score_limit: num(),
  edge_limit: num(),
  max_reranker_input: num(),
  streaming: bool(),
  parent_uri: str(),
  user_context: optRecord(UserContextSchema),
  /** Entity IRIs to start from instead of (or besides) the embedding lookup. */
  grounding_seeds: list(z.string()),
  graph_seeds: list(z.string()),
  languages: list(z.string()),
  traversal_instructions: list(TraversalStepSchema),
  /** Named graph to query, or null for the service's default. */
  graph: optStr(),
});
export type GraphRagQuery = z.output<typeof GraphRagQuerySchema>;
export type GraphRagQueryInput = z.input<typeof GraphRagQuerySchema>;

export const SourceSchema = z.object({
  uri: str(),
  title: str(),
});
export type Source = z.output<typeof SourceSchema>;

export const GraphRagResponseSchema = z.object({
  error: errorField(),
  response: str(),
  end_of_stream: bool(),
  explain_id: optStr(),
  explain_graph: optStr(),
  explain_triples: list(TripleSchema),
  /** `chunk` or `explain`. */
  message_type: str(),
  end_of_session: bool(),
  in_token: optNum(),
  out_token: optNum(),
  model: optStr(),
  sources: list(SourceSchema),
});
export type GraphRagResponse = z.output<typeof GraphRagResponseSchema>;
export type GraphRagResponseInput = z.input<typeof GraphRagResponseSchema>;

const graphRagQuery = defineMessage('GraphRagQuery', GraphRagQuerySchema);
const graphRagResponse = defineMessage('GraphRagResponse', GraphRagResponseSchema);

export const graphRagQueryCodec = graphRagQuery.codec;
export const graphRagResponseCodec = graphRagResponse.codec;
export const makeGraphRagQuery = graphRagQuery.make;
export const makeGraphRagResponse = graphRagResponse.make;
