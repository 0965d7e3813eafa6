/**
 * `trustgraph-base/trustgraph/schema/embeddings.py` (TrustGraph 2.11.1): row-embeddings query (RowIndexMatch).
 * 2.11 added `attributes` (a string or a list of strings per key) to the request and to each match.
 */
import { z } from 'zod';
import { errorField } from './primitives.js';
import { defineMessage, dict, list, num, optStr, str } from './schema-kit.js';

/** `dict[str, str | list[str]]`; `null` or missing → `{}`. */
const attributesField = () => dict(z.union([z.string(), z.array(z.string())]));

export const RowIndexMatchSchema = z.object({
  index_name: str(),
  index_value: list(z.string()),
  text: str(),
  score: num(),
  attributes: attributesField(),
});
export type RowIndexMatch = z.output<typeof RowIndexMatchSchema>;
export type RowIndexMatchInput = z.input<typeof RowIndexMatchSchema>;

export const RowEmbeddingsRequestSchema = z.object({
  /** The query vector. */
  vector: list(z.number()),
  limit: num(10),
  collection: str(),
  schema_name: str(),
  /** Restrict to one index, or null for all. */
  index_name: optStr(),
  /** Attribute filter (2.11). */
  attributes: attributesField(),
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
