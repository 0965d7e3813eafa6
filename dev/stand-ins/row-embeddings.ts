/**
 * TrustGraph's row-embeddings query service (docs/trustgraph-agent-notes.md §4.3), step 2 of a `row-embeddings-query` tool:
 * RowEmbeddingsRequest `{vector, limit, collection, schema_name, index_name, attributes}` → `{error, matches}`
 * (`search` decides the matches; at most `limit` are sent).
 */
import {
  makeRowEmbeddingsResponse,
  rowEmbeddingsRequestCodec,
  rowEmbeddingsResponseCodec,
  type RowEmbeddingsRequest,
  type RowEmbeddingsResponse,
  type RowIndexMatchInput,
} from '../../src/wire/index.js';
import type { Queues } from './embeddings.js';
import { answerScripted, scriptedHandle, startStandIn, type ServiceStandIn, type SpecialReply } from './service-stand-in.js';

export type RowSearch = (request: RowEmbeddingsRequest) => RowIndexMatchInput[] | SpecialReply;

export interface RowEmbeddingsStandIn {
  readonly bus: ServiceStandIn<RowEmbeddingsRequest, RowEmbeddingsResponse>;
  readonly calls: RowEmbeddingsRequest[];
  search: RowSearch;
  stop(): Promise<void>;
}

export async function startRowEmbeddings(options: Queues & { search?: RowSearch }): Promise<RowEmbeddingsStandIn> {
  const state: { search: RowSearch } = { search: options.search ?? ((): RowIndexMatchInput[] => []) };
  const bus = await startStandIn<RowEmbeddingsRequest, RowEmbeddingsResponse>({
    ...options,
    requestCodec: rowEmbeddingsRequestCodec,
    responseCodec: rowEmbeddingsResponseCodec,
    name: 'row-embeddings',
    errorReply: (message) => makeRowEmbeddingsResponse({ error: { type: 'row-embeddings-error', message } }),
    async handle(request, ctx) {
      return answerScripted(state.search(request), ctx, {
        error: (error) => makeRowEmbeddingsResponse({ error }),
        value: (matches) => makeRowEmbeddingsResponse({ error: null, matches: matches.slice(0, request.limit || undefined) }),
      });
    },
  });
  return scriptedHandle(bus, state, { bus, calls: bus.calls });
}
