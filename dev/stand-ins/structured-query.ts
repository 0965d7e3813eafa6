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
import { answerScripted, scriptedHandle, startStandIn, type ServiceStandIn, type SpecialReply } from './service-stand-in.js';

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
  const state: { answer: StructuredQueryAnswer } = { answer: options.answer ?? ((question: string): unknown => ({ question, rows: [] })) };
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
      return answerScripted(result, ctx, {
        error: (error) => makeStructuredQueryResponse({ error }),
        value: (value) => makeStructuredQueryResponse({ error: null, data: typeof value === 'string' ? value : JSON.stringify(value), errors: [] }),
      });
    },
  });
  return scriptedHandle(bus, state, { bus, calls: bus.calls });
}
