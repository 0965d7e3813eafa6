/**
 * TrustGraph's Graph RAG service (docs/trustgraph-agent-notes.md §3.6, §4.3): for each GraphRagQuery it sends one `explain`
 * message, then one `chunk` message with the answer in `response` and `end_of_stream` / `end_of_session`
 * both true. `answer` may also return an error record or raw bytes.
 */
import { randomUUID } from 'node:crypto';
import type { Transport } from '../../src/bus/transport.js';
import {
  graphRagQueryCodec,
  graphRagResponseCodec,
  makeGraphRagResponse,
  type GraphRagQuery,
  type GraphRagResponse,
} from '../../src/wire/index.js';
import { answerScripted, scriptedHandle, startStandIn, type ServiceStandIn, type SpecialReply } from './service-stand-in.js';

export type GraphRagAnswer = (query: string, request: GraphRagQuery) => string | SpecialReply | Promise<string | SpecialReply>;

export interface GraphRagOptions {
  transport: Transport;
  requestQueue: string;
  responseQueue: string;
  answer?: GraphRagAnswer;
}

export interface GraphRagStandIn {
  readonly bus: ServiceStandIn<GraphRagQuery, GraphRagResponse>;
  readonly calls: GraphRagQuery[];
  answer: GraphRagAnswer;
  stop(): Promise<void>;
}

export async function startGraphRag(options: GraphRagOptions): Promise<GraphRagStandIn> {
  const state: { answer: GraphRagAnswer } = { answer: options.answer ?? ((query: string) => `Graph RAG answer to: ${query}`) };
  const bus = await startStandIn<GraphRagQuery, GraphRagResponse>({
    transport: options.transport,
    requestQueue: options.requestQueue,
    responseQueue: options.responseQueue,
    requestCodec: graphRagQueryCodec,
    responseCodec: graphRagResponseCodec,
    name: 'graph-rag',
    errorReply: (message) =>
      makeGraphRagResponse({ error: { type: 'graph-rag-error', message }, end_of_stream: true, end_of_session: true }),
    async handle(request, ctx) {
      return answerScripted(await state.answer(request.query, request), ctx, {
        error: (error) => makeGraphRagResponse({ error, message_type: 'chunk', end_of_stream: true, end_of_session: true }),
        value: (response) => [
          makeGraphRagResponse({
            message_type: 'explain',
            explain_id: `urn:trustgraph:question:${randomUUID()}`,
            explain_graph: 'urn:graph:retrieval',
            explain_triples: [],
          }),
          makeGraphRagResponse({ message_type: 'chunk', response, end_of_stream: true, end_of_session: true, sources: [] }),
        ],
      });
    },
  });
  return scriptedHandle(bus, state, { bus, calls: bus.calls });
}
