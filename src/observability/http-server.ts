/**
 * The service's HTTP endpoints on the metrics port (TrustGraph: 8000): `/metrics` (Prometheus),
 * `/healthz` (the process is alive), `/readyz` (config loaded, flows subscribed, broker connected),
 * and `/tools` (read-only listing of each workspace's groups, states and tools; TG-20, docs/requirements.md).
 *
 * With a token, `/tools` requires `Authorization: Bearer <token>`; the probes and `/metrics` stay open
 * (Prometheus and Kubernetes scrape them without credentials, as they do TrustGraph's processors).
 * A URL that cannot be decoded answers 400 and is logged at debug only: any client can send one.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { errorMessage } from '../errors/error-text.js';
import { maskSecrets } from '../errors/secret-text.js';
import { BadRequestError } from './errors.js';

export interface HttpRoutes {
  metrics?(): Promise<{ contentType: string; body: string }>;
  readiness(): { ready: boolean; detail: string };
  /** `/tools` and `/tools/<workspace>`, with the query parameters. */
  tools?(workspace: string | undefined, query: URLSearchParams): unknown;
  /** `/workflow/<workspace>[.svg|.dot|.mmd|.json]`: the workflow picture; undefined for an unknown workspace. */
  workflow?(workspace: string, format: string, query: URLSearchParams): Promise<{ contentType: string; body: string } | undefined>;
}

export interface HttpServerOptions {
  /** Bearer token the listing endpoints require; undefined: they are open. */
  listingToken?: string;
  /** Values no answer may show (the settings' credentials): masked in every body, whatever route wrote it. */
  secrets?: readonly string[];
}

export class HttpServer {
  private server: Server | undefined;

  constructor(
    private readonly routes: HttpRoutes,
    private readonly logger: Logger,
    private readonly options: HttpServerOptions = {},
  ) {}

  async listen(port: number, host = '0.0.0.0'): Promise<number> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        if (error instanceof BadRequestError) {
          this.logger.debug({ url: req.url?.slice(0, 200) }, `HTTP request refused: ${error.message}`);
          return this.send(res, 400, 'text/plain; charset=utf-8', `bad request: ${error.message}\n`);
        }
        this.logger.error({ err: error, url: req.url?.slice(0, 200) }, 'HTTP request failed');
        this.send(res, 500, 'text/plain; charset=utf-8', `internal error: ${errorMessage(error)}\n`);
      });
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    return (server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://localhost');
    } catch {
      throw new BadRequestError('the URL cannot be parsed');
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return this.send(res, 405, 'text/plain', 'only GET\n');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    if (path === '/healthz') return this.send(res, 200, 'text/plain', 'ok\n');
    if (path === '/readyz') {
      const { ready, detail } = this.routes.readiness();
      return this.send(res, ready ? 200 : 503, 'text/plain; charset=utf-8', `${ready ? 'ready' : 'not ready'}: ${detail}\n`);
    }
    if (path === '/metrics' && this.routes.metrics) {
      const { contentType, body } = await this.routes.metrics();
      return this.send(res, 200, contentType, body);
    }
    const tools = /^\/tools(?:\/([^/]+))?$/.exec(path);
    const workflow = /^\/workflow\/([^/]+?)(?:\.(svg|dot|mmd|json))?$/.exec(path);
    if (((tools && this.routes.tools) || (workflow && this.routes.workflow)) && !this.authorized(req)) {
      res.setHeader('www-authenticate', 'Bearer realm="tg-agent"');
      return this.send(res, 401, 'application/json', JSON.stringify({ error: 'the tool listing needs Authorization: Bearer <token> (--http-token)' }));
    }
    if (workflow && this.routes.workflow) {
      const workspace = decodeSegment(workflow[1]!);
      const rendered = await this.routes.workflow(workspace, workflow[2] ?? 'html', url.searchParams);
      if (rendered === undefined) return this.send(res, 404, 'application/json', JSON.stringify({ error: `unknown workspace "${workspace}"` }));
      return this.send(res, 200, rendered.contentType, rendered.body);
    }
    if (tools && this.routes.tools) {
      const workspace = tools[1] ? decodeSegment(tools[1]) : undefined;
      const body = this.routes.tools(workspace, url.searchParams);
      if (body === undefined) return this.send(res, 404, 'application/json', JSON.stringify({ error: `unknown workspace "${workspace}"` }));
      return this.send(res, 200, 'application/json', `${JSON.stringify(body, null, 2)}\n`);
    }
    this.send(res, 404, 'text/plain', `not found: ${path.slice(0, 200)}; try /metrics, /healthz, /readyz, /tools, /workflow/<workspace>\n`);
  }

  private send(res: ServerResponse, status: number, contentType: string, body: string): void {
    const secrets = this.options.secrets ?? [];
    res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
    res.end(secrets.length > 0 ? maskSecrets(body, secrets) : body);
  }

  private authorized(req: IncomingMessage): boolean {
    const token = this.options.listingToken;
    if (token === undefined) return true;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!match) return false;
    const given = Buffer.from(match[1]!);
    const expected = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new BadRequestError('malformed percent-encoding in the path');
  }
}
