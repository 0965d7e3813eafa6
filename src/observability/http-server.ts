/**
 * The service's HTTP endpoints on the metrics port (TrustGraph: 8000): `/metrics` (Prometheus),
 * `/healthz` (the process is alive), `/readyz` (config loaded, flows subscribed, broker connected),
 * and `/tools` (read-only listing of each workspace's groups, states and tools; TG-20).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';

export interface HttpRoutes {
  metrics?(): Promise<{ contentType: string; body: string }>;
  readiness(): { ready: boolean; detail: string };
  /** `/tools` and `/tools/<workspace>`, with the query parameters. */
  tools?(workspace: string | undefined, query: URLSearchParams): unknown;
}

export class HttpServer {
  private server: Server | undefined;

  constructor(
    private readonly routes: HttpRoutes,
    private readonly logger: Logger,
  ) {}

  async listen(port: number, host = '0.0.0.0'): Promise<number> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        this.logger.error({ err: error, url: req.url }, 'HTTP request failed');
        send(res, 500, 'text/plain; charset=utf-8', `internal error: ${(error as Error).message}\n`);
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
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain', 'only GET\n');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    if (path === '/healthz') return send(res, 200, 'text/plain', 'ok\n');
    if (path === '/readyz') {
      const { ready, detail } = this.routes.readiness();
      return send(res, ready ? 200 : 503, 'text/plain; charset=utf-8', `${ready ? 'ready' : 'not ready'}: ${detail}\n`);
    }
    if (path === '/metrics' && this.routes.metrics) {
      const { contentType, body } = await this.routes.metrics();
      return send(res, 200, contentType, body);
    }
    const tools = /^\/tools(?:\/([^/]+))?$/.exec(path);
    if (tools && this.routes.tools) {
      const workspace = tools[1] ? decodeURIComponent(tools[1]) : undefined;
      const body = this.routes.tools(workspace, url.searchParams);
      if (body === undefined) return send(res, 404, 'application/json', JSON.stringify({ error: `unknown workspace "${workspace}"` }));
      return send(res, 200, 'application/json', `${JSON.stringify(body, null, 2)}\n`);
    }
    send(res, 404, 'text/plain', `not found: ${path}; try /metrics, /healthz, /readyz, /tools\n`);
  }
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  res.end(body);
}
