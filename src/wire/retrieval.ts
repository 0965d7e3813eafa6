/**
 * `trustgraph-base/trustgraph/schema/services/retrieval.py` (2.8): GraphRagQuery / GraphRagResponse.
 * The client reads until `end_of_session`; `explain` messages precede the `chunk` messages.
 */
import { z } from 'zod';
import { TripleSchema, errorField } from './primitives.js';
import { bool, defineMessage, list, num, optNum, optStr, str } from './schema-kit.js';

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
