/**
 * TrustGraph's MCP tool service (docs/trustgraph-agent-notes.md §2.9, §4.3): ToolRequest `{name, parameters: JSON string}` →
 * one ToolResponse with `text`, or `object` (a JSON string) when the handler returns `{object}`. Handlers are
 * keyed by the configured MCP tool id (the request's `name`); an unknown name is answered as the real
 * service does ("MCP service X not known", type `tool-error`).
 */
import type { Transport } from '../../src/bus/transport.js';
import {
  makeToolResponse,
  toolRequestCodec,
  toolResponseCodec,
  type ToolRequest,
  type ToolResponse,
} from '../../src/wire/index.js';
import { answerScripted, jsonOrString, startStandIn, type ServiceStandIn, type SpecialReply } from './service-stand-in.js';

export type McpReply = string | { object: unknown } | SpecialReply;
export type McpHandler = (parameters: unknown, request: ToolRequest) => McpReply | Promise<McpReply>;

export interface McpCall {
  readonly name: string;
  /** `parameters` JSON-decoded. */
  readonly parameters: unknown;
  readonly request: ToolRequest;
}

export interface McpToolOptions {
  transport: Transport;
  requestQueue: string;
  responseQueue: string;
  tools?: Record<string, McpHandler>;
  /** Workspace named in "not known" errors. */
  workspace?: string;
}

export interface McpToolStandIn {
  readonly bus: ServiceStandIn<ToolRequest, ToolResponse>;
  readonly calls: readonly McpCall[];
  /** Handlers by MCP tool id; add or replace entries at will. */
  readonly tools: Record<string, McpHandler>;
  stop(): Promise<void>;
}

export async function startMcpTool(options: McpToolOptions): Promise<McpToolStandIn> {
  const calls: McpCall[] = [];
  const tools: Record<string, McpHandler> = { ...(options.tools ?? {}) };
  const bus = await startStandIn<ToolRequest, ToolResponse>({
    transport: options.transport,
    requestQueue: options.requestQueue,
    responseQueue: options.responseQueue,
    requestCodec: toolRequestCodec,
    responseCodec: toolResponseCodec,
    name: 'mcp-tool',
    errorReply: (message) => makeToolResponse({ error: { type: 'tool-error', message } }),
    async handle(request, ctx) {
      const parameters = jsonOrString(request.parameters);
      calls.push({ name: request.name, parameters, request });
      const handler = tools[request.name];
      if (!handler) {
        return makeToolResponse({
          error: {
            type: 'tool-error',
            message: `MCP service ${request.name} not known in workspace ${options.workspace ?? 'default'}`,
          },
        });
      }
      return answerScripted(await handler(parameters, request), ctx, {
        error: (error) => makeToolResponse({ error }),
        value: (reply) =>
          typeof reply === 'string'
            ? makeToolResponse({ text: reply, object: null })
            : makeToolResponse({ text: null, object: JSON.stringify(reply.object) }),
      });
    },
  });
  return { bus, calls, tools, stop: () => bus.stop() };
}
