/** `trustgraph-base/trustgraph/schema/structured.py` (TrustGraph 2.11.1, unchanged since 2.8): StructuredQueryRequest / Response. */
import { z } from 'zod';
import { errorField } from './primitives.js';
import { defineMessage, list, str } from './schema-kit.js';

export const StructuredQueryRequestSchema = z.object({
  question: str(),
  collection: str(),
});
export type StructuredQueryRequest = z.output<typeof StructuredQueryRequestSchema>;
export type StructuredQueryRequestInput = z.input<typeof StructuredQueryRequestSchema>;

export const StructuredQueryResponseSchema = z.object({
  error: errorField(),
  /** JSON-encoded GraphQL response data. */
  data: str(),
  /** GraphQL errors, if any. */
  errors: list(z.string()),
});
export type StructuredQueryResponse = z.output<typeof StructuredQueryResponseSchema>;
export type StructuredQueryResponseInput = z.input<typeof StructuredQueryResponseSchema>;

const structuredQueryRequest = defineMessage('StructuredQueryRequest', StructuredQueryRequestSchema);
const structuredQueryResponse = defineMessage('StructuredQueryResponse', StructuredQueryResponseSchema);

export const structuredQueryRequestCodec = structuredQueryRequest.codec;
export const structuredQueryResponseCodec = structuredQueryResponse.codec;
export const makeStructuredQueryRequest = structuredQueryRequest.make;
export const makeStructuredQueryResponse = structuredQueryResponse.make;
