/**
 * TrustGraph's embeddings service (docs/trustgraph-agent-notes.md §4.3), step 1 of a `row-embeddings-query` tool:
 * EmbeddingsRequest `{texts}` → `{error, vectors}` (one vector per text). Step 2 is ./row-embeddings.ts.
 */
import type { Transport } from '../../src/bus/transport.js';
import {
  embeddingsRequestCodec,
  embeddingsResponseCodec,
  makeEmbeddingsResponse,
  type EmbeddingsRequest,
  type EmbeddingsResponse,
} from '../../src/wire/index.js';
import { isErrorReply, isRawReply, scriptedHandle, startStandIn, type ServiceStandIn, type SpecialReply } from './service-stand-in.js';

export interface Queues {
  transport: Transport;
  requestQueue: string;
  responseQueue: string;
}

export type EmbedFunction = (text: string) => number[] | SpecialReply;

export interface EmbeddingsStandIn {
  readonly bus: ServiceStandIn<EmbeddingsRequest, EmbeddingsResponse>;
  readonly calls: EmbeddingsRequest[];
  embed: EmbedFunction;
  stop(): Promise<void>;
}

/** A deterministic toy embedding: [length, char-code sum mod 97, vowel count]. */
export function toyEmbedding(text: string): number[] {
  let sum = 0;
  let vowels = 0;
  for (const ch of text) {
    sum += ch.codePointAt(0) ?? 0;
    if ('aeiouAEIOU'.includes(ch)) vowels += 1;
  }
  return [text.length, sum % 97, vowels];
}

export async function startEmbeddings(options: Queues & { embed?: EmbedFunction }): Promise<EmbeddingsStandIn> {
  const state: { embed: EmbedFunction } = { embed: options.embed ?? toyEmbedding };
  const bus = await startStandIn<EmbeddingsRequest, EmbeddingsResponse>({
    ...options,
    requestCodec: embeddingsRequestCodec,
    responseCodec: embeddingsResponseCodec,
    name: 'embeddings',
    errorReply: (message) => makeEmbeddingsResponse({ error: { type: 'embeddings-error', message } }),
    async handle(request, ctx) {
      const vectors: number[][] = [];
      for (const text of request.texts) {
        const result = state.embed(text);
        if (isRawReply(result)) {
          await ctx.sendRaw(result.raw);
          return [];
        }
        if (isErrorReply(result)) return makeEmbeddingsResponse({ error: result.error });
        vectors.push(result);
      }
      return makeEmbeddingsResponse({ error: null, vectors });
    },
  });
  return scriptedHandle(bus, state, { bus, calls: bus.calls });
}
