/**
 * A TrustGraph dynamic tool service (`dynamic_tool_service.py`, docs/trustgraph-agent-notes.md §2.5) on its own queues:
 * ToolServiceRequest `{config, arguments}` (JSON strings; empty → `{}`) → `{error: null, response,
 * end_of_stream: true}`; a non-string result is sent as JSON; a thrown error becomes
 * `{error: {type: "tool-service-error", message}, response: "", end_of_stream: true}`.
 * Subscription `<id>-request`, as the real service names it.
 */
import type { Transport } from '../../src/bus/transport.js';
import {
  makeToolServiceResponse,
  toolServiceRequestCodec,
  toolServiceResponseCodec,
  type ToolServiceRequest,
  type ToolServiceResponse,
} from '../../src/wire/index.js';
import { answerScripted, jsonOrString, scriptedHandle, startStandIn, type ServiceStandIn, type SpecialReply } from './service-stand-in.js';

export type ToolServiceHandler = (
  args: Record<string, unknown>,
  config: Record<string, unknown>,
) => unknown | SpecialReply | Promise<unknown>;

export interface ToolServiceCall {
  readonly config: Record<string, unknown>;
  readonly arguments: Record<string, unknown>;
  readonly request: ToolServiceRequest;
}

export interface ToolServiceOptions {
  transport: Transport;
  /** Service id (subscription `<id>-request`). */
  id: string;
  /** Full queue ids, e.g. `non-persistent://tg/request/joke`. */
  requestQueue: string;
  responseQueue: string;
  handler: ToolServiceHandler;
}

export interface ToolServiceStandIn {
  readonly id: string;
  readonly requestQueue: string;
  readonly responseQueue: string;
  readonly bus: ServiceStandIn<ToolServiceRequest, ToolServiceResponse>;
  readonly calls: readonly ToolServiceCall[];
  handler: ToolServiceHandler;
  stop(): Promise<void>;
}

function decodeObject(text: string): Record<string, unknown> {
  if (text === '') return {};
  const value = jsonOrString(text);
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export async function startToolService(options: ToolServiceOptions): Promise<ToolServiceStandIn> {
  const calls: ToolServiceCall[] = [];
  const state: { handler: ToolServiceHandler } = { handler: options.handler };
  const bus = await startStandIn<ToolServiceRequest, ToolServiceResponse>({
    transport: options.transport,
    requestQueue: options.requestQueue,
    responseQueue: options.responseQueue,
    requestCodec: toolServiceRequestCodec,
    responseCodec: toolServiceResponseCodec,
    subscription: `${options.id}-request`,
    name: `tool-service ${options.id}`,
    errorReply: (message) =>
      makeToolServiceResponse({ error: { type: 'tool-service-error', message }, response: '', end_of_stream: true }),
    async handle(request, ctx) {
      const config = decodeObject(request.config);
      const args = decodeObject(request.arguments);
      calls.push({ config, arguments: args, request });
      const result: unknown = await state.handler(args, config);
      return answerScripted(result, ctx, {
        error: (error) => makeToolServiceResponse({ error, response: '', end_of_stream: true }),
        value: (value) =>
          makeToolServiceResponse({ error: null, response: typeof value === 'string' ? value : JSON.stringify(value), end_of_stream: true }),
      });
    },
  });
  return scriptedHandle(bus, state, {
    id: options.id,
    requestQueue: options.requestQueue,
    responseQueue: options.responseQueue,
    bus,
    calls,
  });
}
