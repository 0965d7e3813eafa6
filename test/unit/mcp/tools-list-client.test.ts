// The tools/list client against a real MCP server (SDK McpServer + StreamableHTTPServerTransport on
// 127.0.0.1): bearer tokens, failures and their reasons. No broker needed.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { listMcpTools } from '../../../src/mcp/tools-list-client.js';
import { McpDiscoveryError } from '../../../src/mcp/errors.js';
import { startMcpServer, type McpServerStandIn } from '../../../dev/stand-ins/mcp-server.js';

let server: McpServerStandIn | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

async function failureOf(promise: Promise<unknown>): Promise<McpDiscoveryError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof McpDiscoveryError)) throw new Error(`expected an McpDiscoveryError, got ${String(error)}`);
  return error;
}

describe('tools/list over MCP Streamable HTTP', () => {
  it('lists tools with their input schemas, sending the bearer token', async () => {
    server = await startMcpServer({
      requireToken: 'tok-1',
      tools: {
        search: {
          description: 'Search the catalogue',
          input: z.object({ query: z.string().describe('What to find'), filter: z.object({ since: z.string() }).optional() }),
        },
        raw: { jsonSchema: { type: 'string' } },
      },
    });
    const tools = await listMcpTools({ url: server.url, authToken: 'tok-1' }, { timeoutMs: 5_000 });
    expect(tools.map((t) => t.name)).toEqual(['search', 'raw']);
    expect(tools[0]).toMatchObject({
      description: 'Search the catalogue',
      inputSchema: {
        type: 'object',
        properties: { query: { type: 'string', description: 'What to find' }, filter: { type: 'object' } },
        required: ['query'],
      },
    });
    // A malformed schema does not hide the server's other tools; it is judged later, per tool.
    expect(tools[1]?.inputSchema).toEqual({ type: 'string' });
    expect(server.requests.every((r) => r.authorization === 'Bearer tok-1')).toBe(true);
    expect(server.listCalls()).toBe(1);
  });

  it('sends no Authorization header without a token', async () => {
    server = await startMcpServer({ tools: { a: {} } });
    await listMcpTools({ url: server.url, authToken: undefined }, { timeoutMs: 5_000 });
    expect(server.requests.map((r) => r.authorization)).toEqual(server.requests.map(() => undefined));
  });

  it('says "unauthorized" for a wrong token, without showing it', async () => {
    server = await startMcpServer({ requireToken: 'right', tools: { a: {} } });
    const error = await failureOf(listMcpTools({ url: server.url, authToken: 'wrong-token' }, { timeoutMs: 5_000 }));
    expect(error.reason).toBe('unauthorized');
    expect(error.message).toBe(`MCP server ${server.url} refused the request (HTTP 401); check the "auth-token" of the mcp entry`);
  });

  it('says "timeout" when the server is too slow', async () => {
    server = await startMcpServer({ tools: { a: {} } });
    server.delayMs = 2_000;
    const error = await failureOf(listMcpTools({ url: server.url, authToken: undefined }, { timeoutMs: 300 }));
    expect(error.reason).toBe('timeout');
    expect(error.message).toContain('did not answer tools/list within 0.3 s');
  });

  it('says "unreachable" when the server is down', async () => {
    server = await startMcpServer({ tools: { a: {} } });
    await server.stop();
    const error = await failureOf(listMcpTools({ url: server.url, authToken: undefined }, { timeoutMs: 5_000 }));
    expect(error.reason).toBe('unreachable');
    expect(error.message).toBe(`cannot reach MCP server ${server.url} (ECONNREFUSED); check the "url" of the mcp entry and that the server is running`);
  });

  it('says "http" for a wrong path', async () => {
    server = await startMcpServer({ tools: { a: {} } });
    const { createServer } = await import('node:http');
    const notMcp = createServer((_req, res) => res.writeHead(404).end('no such thing'));
    await new Promise<void>((resolve) => notMcp.listen(0, '127.0.0.1', resolve));
    const port = (notMcp.address() as { port: number }).port;
    try {
      const error = await failureOf(listMcpTools({ url: `http://127.0.0.1:${port}/wrong`, authToken: undefined }, { timeoutMs: 5_000 }));
      expect(error.reason).toBe('http');
      expect(error.message).toContain('answered HTTP 404; check the "url" path of the mcp entry');
    } finally {
      notMcp.close();
    }
  });
});
