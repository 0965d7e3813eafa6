/**
 * A real MCP server (the official SDK's `McpServer` over `StreamableHTTPServerTransport`, stateless mode) on
 * 127.0.0.1 and an ephemeral port: what TrustGraph's `mcp` config entries point at. The agent only asks it
 * for `tools/list` (MCP argument discovery); tool calls go through TrustGraph's mcp-tool service on Pulsar.
 *
 * Tools are declared with zod (the SDK turns them into JSON Schema, as any SDK-built server does) or with a
 * raw JSON Schema served as is (malformed ones included). Everything is live: change `tools`, `requireToken`
 * or `delayMs` and the next request sees it; `stop()` takes the server down (connections refused) and
 * `start()` brings it back on the same port. Requests are recorded: JSON-RPC method and Authorization header.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

export interface McpServerTool {
  description?: string;
  /** Arguments as a zod object; the SDK lists them as JSON Schema (draft-07). */
  input?: z.ZodObject;
  /** Or an input schema listed exactly as given (takes precedence over `input`). */
  jsonSchema?: unknown;
  /** Result text of tools/call (default: the arguments as JSON). */
  handler?: (args: Record<string, unknown>) => string;
}

export interface McpServerRequest {
  readonly method: string | undefined;
  readonly authorization: string | undefined;
}

export interface McpServerStandIn {
  /** `http://127.0.0.1:<port>/mcp` */
  readonly url: string;
  readonly port: number;
  /** Tools by name; edit freely. */
  readonly tools: Record<string, McpServerTool>;
  /** Every JSON-RPC request received (POST bodies), in order. */
  readonly requests: readonly McpServerRequest[];
  /** Number of `tools/list` requests answered or attempted. */
  listCalls(): number;
  /** When set, requests without `Authorization: Bearer <token>` get HTTP 401. */
  requireToken: string | undefined;
  /** Wait this long before answering each POST (timeouts). */
  delayMs: number;
  readonly running: boolean;
  /** Take the server down: close the listener and every connection. */
  stop(): Promise<void>;
  /** Listen again on the same port. */
  start(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return text;
  }
}

function methodsOf(body: unknown): (string | undefined)[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.map((m) => (m !== null && typeof m === 'object' && typeof (m as { method?: unknown }).method === 'string' ? (m as { method: string }).method : undefined));
}

function buildServer(tools: Record<string, McpServerTool>): McpServer {
  const server = new McpServer({ name: 'stand-in-mcp-server', version: '1.0.0' });
  for (const [name, tool] of Object.entries(tools)) {
    server.registerTool(
      name,
      { ...(tool.description === undefined ? {} : { description: tool.description }), inputSchema: tool.input ?? z.object({}).loose() },
      (args: Record<string, unknown>) => ({ content: [{ type: 'text' as const, text: tool.handler ? tool.handler(args) : JSON.stringify(args) }] }),
    );
  }
  if (Object.values(tools).some((tool) => tool.jsonSchema !== undefined)) {
    // Raw schemas: answer tools/list ourselves, converting zod tools the way McpServer does.
    server.server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: Object.entries(tools).map(([name, tool]) => ({
        name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        inputSchema: (tool.jsonSchema ?? z.toJSONSchema(tool.input ?? z.object({}), { target: 'draft-7', io: 'input' })) as {
          type: 'object';
        },
      })),
    }));
  }
  return server;
}

export async function startMcpServer(options: { tools?: Record<string, McpServerTool>; requireToken?: string } = {}): Promise<McpServerStandIn> {
  const tools: Record<string, McpServerTool> = { ...(options.tools ?? {}) };
  const requests: McpServerRequest[] = [];
  let http: Server | undefined;
  let port = 0;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'POST') {
      // Stateless server: no standalone SSE stream, no sessions to delete.
      res.writeHead(405, { Allow: 'POST', 'Content-Type': 'application/json' }).end(
        JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null }),
      );
      return;
    }
    const body = await readBody(req);
    const authorization = req.headers.authorization;
    for (const method of methodsOf(body)) requests.push({ method, authorization });
    if (standIn.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, standIn.delayMs));
    if (standIn.requireToken !== undefined && authorization !== `Bearer ${standIn.requireToken}`) {
      res.writeHead(401, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'unauthorized' }));
      return;
    }
    const server = buildServer(tools);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const listen = async (): Promise<void> => {
    const server = createServer((req, res) => {
      handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500).end(String(error));
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    port = (server.address() as AddressInfo).port;
    http = server;
  };

  await listen();
  const standIn: McpServerStandIn = {
    get url() {
      return `http://127.0.0.1:${port}/mcp`;
    },
    get port() {
      return port;
    },
    tools,
    requests,
    listCalls: () => requests.filter((r) => r.method === 'tools/list').length,
    requireToken: options.requireToken,
    delayMs: 0,
    get running() {
      return http !== undefined;
    },
    async stop() {
      const server = http;
      http = undefined;
      if (!server) return;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    async start() {
      if (!http) await listen();
    },
  };
  return standIn;
}
