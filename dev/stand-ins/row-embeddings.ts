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
import { isErrorReply, isRawReply, startStandIn, type ServiceStandIn, type SpecialReply } from './service-stand-in.js';

export type RowSearch = (request: RowEmbeddingsRequest) => RowIndexMatchInput[] | SpecialReply;

export interface RowEmbeddingsStandIn {
  readonly bus: ServiceStandIn<RowEmbeddingsRequest, RowEmbeddingsResponse>;
  readonly calls: RowEmbeddingsRequest[];
  search: RowSearch;
  stop(): Promise<void>;
}

export async function startRowEmbeddings(options: Queues & { search?: RowSearch }): Promise<RowEmbeddingsStandIn> {
  const state = { search: options.search ?? ((): RowIndexMatchInput[] => []) };
  const bus = await startStandIn<RowEmbeddingsRequest, RowEmbeddingsResponse>({
    ...options,
    requestCodec: rowEmbeddingsRequestCodec,
    responseCodec: rowEmbeddingsResponseCodec,
    name: 'row-embeddings',
    errorReply: (message) => makeRowEmbeddingsResponse({ error: { type: 'row-embeddings-error', message } }),
    async handle(request, ctx) {
      const result = state.search(request);
      if (isRawReply(result)) {
        await ctx.sendRaw(result.raw);
        return [];
      }
      if (isErrorReply(result)) return makeRowEmbeddingsResponse({ error: result.error });
      return makeRowEmbeddingsResponse({ error: null, matches: result.slice(0, request.limit || undefined) });
    },
  });
  return {
    bus,
    calls: bus.calls,
    get search() {
      return state.search;
    },
    set search(value: RowSearch) {
      state.search = value;
    },
    stop: () => bus.stop(),
  };
}
