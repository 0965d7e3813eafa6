/** `trustgraph-base/trustgraph/schema/services/query.py` (2.8): row-embeddings query (RowIndexMatch). */
import { z } from 'zod';
import { errorField } from './primitives.js';
import { defineMessage, list, num, optStr, str } from './schema-kit.js';

export const RowIndexMatchSchema = z.object({
  index_name: str(),
  index_value: list(z.string()),
  text: str(),
  score: num(),
});
export type RowIndexMatch = z.output<typeof RowIndexMatchSchema>;

export const RowEmbeddingsRequestSchema = z.object({
  /** The query vector. */
  vector: list(z.number()),
  limit: num(10),
  collection: str(),
  schema_name: str(),
  /** Restrict to one index, or null for all. */
  index_name: optStr(),
});
export type RowEmbeddingsRequest = z.output<typeof RowEmbeddingsRequestSchema>;
export type RowEmbeddingsRequestInput = z.input<typeof RowEmbeddingsRequestSchema>;

export const RowEmbeddingsResponseSchema = z.object({
  error: errorField(),
  matches: list(RowIndexMatchSchema),
});
export type RowEmbeddingsResponse = z.output<typeof RowEmbeddingsResponseSchema>;
export type RowEmbeddingsResponseInput = z.input<typeof RowEmbeddingsResponseSchema>;

const rowEmbeddingsRequest = defineMessage('RowEmbeddingsRequest', RowEmbeddingsRequestSchema);
const rowEmbeddingsResponse = defineMessage('RowEmbeddingsResponse', RowEmbeddingsResponseSchema);

export const rowEmbeddingsRequestCodec = rowEmbeddingsRequest.codec;
export const rowEmbeddingsResponseCodec = rowEmbeddingsResponse.codec;
export const makeRowEmbeddingsRequest = rowEmbeddingsRequest.make;
export const makeRowEmbeddingsResponse = rowEmbeddingsResponse.make;
