/**
 * Asks one MCP server for its tools (`initialize`, then `tools/list` page by page) over MCP Streamable
 * HTTP — the transport TrustGraph's mcp-tool service uses (docs/trustgraph-agent-notes.md §2.9) — with the official SDK's
 * Client. A configured token goes in `Authorization: Bearer <token>`. The whole exchange has one deadline;
 * every failure becomes a `McpDiscoveryError` with a reason from the fixed list and a message that says
 * what to check. Neither the token nor the URL's user-info ever appears in a message.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { McpDiscoveryError } from './errors.js';
import { redactUrl } from './mcp-config.js';
import { errorMessage, maskSecrets, urlSecrets } from '../errors/index.js';

/** Where to ask: an MCP server URL and its optional bearer token. */
export interface McpEndpoint {
  readonly url: string;
  readonly authToken: string | undefined;
}

/** One tool as the server lists it (the fields discovery reads). */
export interface ListedMcpTool {
  readonly name: string;
  readonly description: string | undefined;
  readonly inputSchema: unknown;
}

export interface ListToolsOptions {
  /** Deadline of the whole exchange. */
  readonly timeoutMs: number;
  /** Aborts the exchange (e.g. on shutdown). */
  readonly signal?: AbortSignal;
}

/** Lists the tools of an MCP server; rejects with `McpDiscoveryError`. */
export type ToolsLister = (endpoint: McpEndpoint, options: ListToolsOptions) => Promise<readonly ListedMcpTool[]>;

const CLIENT_INFO = { name: 'tg-agent', version: '1' } as const;

/**
 * `tools/list` result, read leniently: the SDK's own schema rejects the whole list when one tool's
 * `inputSchema` is malformed, which would hide every other tool of the server. Here each tool needs only a
 * name; its schema is judged on its own later (`schema-arguments.ts`).
 */
const LenientListToolsResult = z.looseObject({
  tools: z.array(z.looseObject({ name: z.string(), description: z.string().nullish(), inputSchema: z.unknown() })),
  nextCursor: z.string().nullish(),
});
/** A server paginating without end is cut off here. */
const MAX_PAGES = 100;
const MAX_DETAIL = 200;
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function short(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MAX_DETAIL ? `${line.slice(0, MAX_DETAIL)}…` : line;
}

/** The network error code in an error or its causes (`fetch failed` hides it in `cause`). */
function networkCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The text without the endpoint's token, URL password, user name or query values, in whatever form they appear. */
export function hideSecrets(text: string, endpoint: McpEndpoint): string {
  return maskSecrets(text, [endpoint.authToken, ...urlSecrets(endpoint.url)]);
}

/** Any failure of the exchange → a reason and an actionable message. */
export function classifyFailure(error: unknown, endpoint: McpEndpoint, timedOut: boolean, timeoutMs: number): McpDiscoveryError {
  if (error instanceof McpDiscoveryError) return error;
  const where = `MCP server ${redactUrl(endpoint.url)}`;
  if (timedOut || (error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number))) {
    return new McpDiscoveryError(
      'timeout',
      `${where} did not answer tools/list within ${timeoutMs / 1000} s; check that it is healthy, or raise --mcp-discovery-timeout`,
    );
  }
  const code = networkCode(error);
  if (code !== undefined) {
    return new McpDiscoveryError('unreachable', `cannot reach ${where} (${code}); check the "url" of the mcp entry and that the server is running`);
  }
  if (error instanceof StreamableHTTPError && (error.code === 401 || error.code === 403)) {
    const hint = endpoint.authToken ? 'check the "auth-token" of the mcp entry' : 'the mcp entry has no "auth-token"; set one';
    return new McpDiscoveryError('unauthorized', `${where} refused the request (HTTP ${error.code}); ${hint}`);
  }
  if (error instanceof StreamableHTTPError && error.code !== undefined && error.code >= 300) {
    const hint = error.code === 404 || error.code === 405 ? '; check the "url" path of the mcp entry (often …/mcp)' : '';
    return new McpDiscoveryError('http', `${where} answered HTTP ${error.code}${hint}: ${short(hideSecrets(error.message, endpoint))}`);
  }
  const message = errorMessage(error);
  if (error instanceof TypeError && /fetch failed/i.test(message)) {
    return new McpDiscoveryError('unreachable', `cannot reach ${where} (${short(hideSecrets(message, endpoint))}); check the "url" of the mcp entry and that the server is running`);
  }
  return new McpDiscoveryError(
    'protocol',
    `${where} did not complete an MCP tools/list exchange over Streamable HTTP: ${short(hideSecrets(message, endpoint))}`,
  );
}

/** `initialize` + every page of `tools/list`, within one deadline. */
export const listMcpTools: ToolsLister = async (endpoint, options) => {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException('deadline passed', 'TimeoutError'));
  }, options.timeoutMs);
  const onAbort = (): void => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });

  const client = new Client(CLIENT_INFO, { capabilities: {} });
  let transport: StreamableHTTPClientTransport | undefined;
  try {
    transport = new StreamableHTTPClientTransport(new URL(endpoint.url), {
      requestInit: endpoint.authToken ? { headers: { Authorization: `Bearer ${endpoint.authToken}` } } : {},
      // Reconnection is for long-lived sessions; one listing either works or is retried later.
      reconnectionOptions: { maxReconnectionDelay: 1000, initialReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1, maxRetries: 0 },
    });
    const requestOptions = { signal: controller.signal, timeout: options.timeoutMs, maxTotalTimeout: options.timeoutMs };
    await client.connect(transport, requestOptions);
    const tools: ListedMcpTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await client.request(
        { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
        LenientListToolsResult,
        requestOptions,
      );
      for (const tool of result.tools) {
        tools.push({ name: tool.name, description: tool.description ?? undefined, inputSchema: tool.inputSchema });
      }
      cursor = result.nextCursor ?? undefined;
      if (cursor === undefined) break;
    }
    return tools;
  } catch (error) {
    throw classifyFailure(error, endpoint, timedOut, options.timeoutMs);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    await closeQuietly(client, transport);
  }
};

/** End the session (when the server keeps one) and the connection, without waiting on a stuck server. */
async function closeQuietly(client: Client, transport: StreamableHTTPClientTransport | undefined): Promise<void> {
  const bounded = (work: Promise<unknown>): Promise<unknown> =>
    Promise.race([work.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
  if (transport?.sessionId !== undefined) await bounded(transport.terminateSession());
  await bounded(client.close());
}
