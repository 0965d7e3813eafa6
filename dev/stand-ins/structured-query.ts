/**
 * TrustGraph's structured query service (docs/trustgraph-agent-notes.md §4.3): StructuredQueryRequest `{question, collection}` →
 * one StructuredQueryResponse `{error, data: JSON string, errors: []}`. `answer` returns the data (any JSON
 * value, or a string taken as already-encoded JSON), an error record or raw bytes.
 */
import type { Transport } from '../../src/bus/transport.js';
import {
  makeStructuredQueryResponse,
  structuredQueryRequestCodec,
  structuredQueryResponseCodec,
  type StructuredQueryRequest,
  type StructuredQueryResponse,
} from '../../src/wire/index.js';
import { isErrorReply, isRawReply, startStandIn, type ServiceStandIn, type SpecialReply } from './service-stand-in.js';

export type StructuredQueryAnswer = (
  question: string,
  request: StructuredQueryRequest,
) => unknown | SpecialReply | Promise<unknown>;

export interface StructuredQueryStandIn {
  readonly bus: ServiceStandIn<StructuredQueryRequest, StructuredQueryResponse>;
  readonly calls: StructuredQueryRequest[];
  answer: StructuredQueryAnswer;
  stop(): Promise<void>;
}

export async function startStructuredQuery(options: {
  transport: Transport;
  requestQueue: string;
  responseQueue: string;
  answer?: StructuredQueryAnswer;
}): Promise<StructuredQueryStandIn> {
  const state = { answer: options.answer ?? ((question: string): unknown => ({ question, rows: [] })) };
  const bus = await startStandIn<StructuredQueryRequest, StructuredQueryResponse>({
    transport: options.transport,
    requestQueue: options.requestQueue,
    responseQueue: options.responseQueue,
    requestCodec: structuredQueryRequestCodec,
    responseCodec: structuredQueryResponseCodec,
    name: 'structured-query',
    errorReply: (message) => makeStructuredQueryResponse({ error: { type: 'structured-query-error', message } }),
    async handle(request, ctx) {
      const result: unknown = await state.answer(request.question, request);
      if (isRawReply(result)) {
        await ctx.sendRaw(result.raw);
        return [];
      }
      if (isErrorReply(result)) return makeStructuredQueryResponse({ error: result.error });
      const data = typeof result === 'string' ? result : JSON.stringify(result);
      return makeStructuredQueryResponse({ error: null, data, errors: [] });
    },
  });
  return {
    bus,
    calls: bus.calls,
    get answer() {
      return state.answer;
    },
    set answer(value: StructuredQueryAnswer) {
      state.answer = value;
    },
    stop: () => bus.stop(),
  };
}
