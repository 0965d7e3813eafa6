/**
 * `pulsar.sh topology` (what `start` runs once the admin API answers) against a scripted admin API: a PUT that
 * gets no answer in time (curl's HTTP 000, as from a loaded broker) is tried again, and the 409 that a creation
 * which did happen answers the next time counts as success; other refusals stop at once.
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../tools/pulsar-standalone/pulsar.sh');
const TENANT = '/admin/v2/tenants/tg';
const [FLOW, REQUEST, RESPONSE, NOTIFY] = ['flow', 'request', 'response', 'notify'].map((ns) => `/admin/v2/namespaces/tg/${ns}`) as [
  string,
  string,
  string,
  string,
];

/** What the scripted admin API does with the n-th PUT (1-based) of a path. */
type Answer = { status: number } | 'hang' | 'drop';

class ScriptedAdmin {
  /** Every request, as `METHOD path`, in arrival order. */
  readonly requests: string[] = [];
  /** Bodies of the PUTs, by path (the last one). */
  readonly bodies = new Map<string, unknown>();
  private readonly server: Server;
  private readonly puts = new Map<string, number>();

  constructor(private readonly answer: (path: string, attempt: number) => Answer) {
    this.server = createServer((req, res) => this.handle(req, res));
  }

  async listen(): Promise<number> {
    await new Promise<void>((done) => this.server.listen(0, '127.0.0.1', done));
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((done) => this.server.close(() => done()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = req.url ?? '';
    this.requests.push(`${req.method} ${path}`);
    if (req.method === 'GET' && path === '/admin/v2/clusters') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('["standalone"]');
      return;
    }
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const attempt = (this.puts.get(path) ?? 0) + 1;
      this.puts.set(path, attempt);
      this.bodies.set(path, JSON.parse(body || 'null'));
      const answer = this.answer(path, attempt);
      if (answer === 'drop') req.socket.destroy();
      else if (answer !== 'hang') res.writeHead(answer.status).end();
      // 'hang': no answer; curl gives up after PULSAR_ADMIN_TIMEOUT.
    });
  }
}

function topology(port: number): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn('bash', [SCRIPT, 'topology'], {
      env: { ...process.env, PULSAR_WEB_PORT: String(port), PULSAR_ADMIN_TIMEOUT: '1', PULSAR_ADMIN_RETRY_PAUSE: '0.2' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stderr }));
  });
}

describe('pulsar.sh topology (tenant and namespace PUTs)', () => {
  let admin: ScriptedAdmin | undefined;

  afterEach(async () => {
    await admin?.close();
    admin = undefined;
  });

  it('tries a PUT again when the broker does not answer in time, and takes the 409 of a creation that happened as success', async () => {
    // The first PUT of the tenant and of tg/response get no answer in time (the broker did create them: the
    // next PUT answers 409); tg/request's connection is dropped without an answer; the rest are created.
    admin = new ScriptedAdmin((path, attempt) => {
      if (path === TENANT || path === RESPONSE) return attempt === 1 ? 'hang' : { status: 409 };
      if (path === REQUEST) return attempt === 1 ? 'drop' : { status: 204 };
      return { status: 204 };
    });
    const { code, stderr } = await topology(await admin.listen());
    expect(stderr).toContain('exist on http://127.0.0.1:');
    expect(code).toBe(0);
    expect(admin.requests).toEqual([
      'GET /admin/v2/clusters',
      `PUT ${TENANT}`,
      `PUT ${TENANT}`,
      `PUT ${FLOW}`,
      `PUT ${REQUEST}`,
      `PUT ${REQUEST}`,
      `PUT ${RESPONSE}`,
      `PUT ${RESPONSE}`,
      `PUT ${NOTIFY}`,
    ]);
    expect(stderr.match(/no answer within 1 s \(attempt 1 of 5\), trying again/g)).toHaveLength(3);
    expect(admin.bodies.get(TENANT)).toEqual({ adminRoles: [], allowedClusters: ['standalone'] });
    expect(admin.bodies.get(RESPONSE)).toEqual({
      retention_policies: { retentionSizeInMB: -1, retentionTimeInMinutes: 3, subscriptionExpirationTimeMinutes: 30 },
    });
  }, 30_000);

  it.each([
    {
      what: 'gives up after five PUTs without an answer, naming HTTP 000',
      answer: (): Answer => 'drop',
      error: 'creating tenant tg failed: HTTP 000',
      failing: TENANT,
      attempts: 5,
      next: FLOW,
    },
    {
      what: 'stops at once on a refusal that a retry cannot change (500)',
      answer: (path: string): Answer => (path === REQUEST ? { status: 500 } : { status: 204 }),
      error: 'creating namespace tg/request failed: HTTP 500',
      failing: REQUEST,
      attempts: 1,
      next: RESPONSE,
    },
  ])('$what', async ({ answer, error, failing, attempts, next }) => {
    admin = new ScriptedAdmin(answer);
    const { code, stderr } = await topology(await admin.listen());
    expect(code).not.toBe(0);
    expect(stderr).toContain(error);
    expect(admin.requests.filter((r) => r === `PUT ${failing}`)).toHaveLength(attempts);
    expect(admin.requests).not.toContain(`PUT ${next}`);
  }, 30_000);
});
