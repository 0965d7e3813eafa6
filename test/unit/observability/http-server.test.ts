import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpServer } from '../../../src/observability/http-server.js';

let server: HttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(listingToken?: string): Promise<string> {
  server = new HttpServer(
    {
      readiness: () => ({ ready: true, detail: 'fine' }),
      metrics: async () => ({ contentType: 'text/plain', body: 'm 1\n' }),
      tools: (workspace) => ({ workspace: workspace ?? null }),
      workflow: async (workspace, format) => (workspace === 'w x' ? { contentType: 'text/plain', body: `${workspace} as ${format}` } : undefined),
    },
    pino({ level: 'silent' }),
    listingToken === undefined ? {} : { listingToken },
  );
  const port = await server.listen(0, '127.0.0.1');
  return `http://127.0.0.1:${port}`;
}

describe('the HTTP endpoints', () => {
  it('never show a secret of the settings, whatever route wrote it', async () => {
    server = new HttpServer(
      {
        readiness: () => ({ ready: false, detail: 'broker http://u:admin-PASS-1@pulsar:8080 unreachable' }),
        metrics: async () => ({ contentType: 'text/plain', body: 'm{url="admin-PASS-1"} 1\n' }),
        tools: () => ({ mcp: 'token tok-SECRET-2' }),
      },
      pino({ level: 'silent' }),
      { secrets: ['admin-PASS-1', 'tok-SECRET-2'] },
    );
    const base = `http://127.0.0.1:${await server.listen(0, '127.0.0.1')}`;
    const bodies = await Promise.all(['/readyz', '/metrics', '/tools', '/x-admin-PASS-1'].map(async (path) => (await fetch(`${base}${path}`)).text()));
    expect(bodies.join('\n')).not.toMatch(/admin-PASS-1|tok-SECRET-2/);
    expect(bodies[0]).toContain('u:***@pulsar');
  });

  it('guard only the listing with the token', async () => {
    const base = await serve('a-listing-token-of-length');
    expect((await fetch(`${base}/tools`)).status).toBe(401);
    expect((await fetch(`${base}/tools`)).headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await fetch(`${base}/tools`, { headers: { authorization: 'Bearer a-listing-token-of-lengtX' } })).status).toBe(401);
    expect((await fetch(`${base}/tools`, { headers: { authorization: 'Basic a-listing-token-of-length' } })).status).toBe(401);
    const ok = await fetch(`${base}/tools/w%20x`, { headers: { authorization: 'Bearer a-listing-token-of-length' } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ workspace: 'w x' });
    for (const path of ['/metrics', '/healthz', '/readyz']) expect((await fetch(`${base}${path}`)).status, path).toBe(200);
    // The workflow picture shows what the listing shows: the same token.
    expect((await fetch(`${base}/workflow/w%20x.svg`)).status).toBe(401);
    const picture = await fetch(`${base}/workflow/w%20x.svg`, { headers: { authorization: 'Bearer a-listing-token-of-length' } });
    expect(await picture.text()).toBe('w x as svg');
  });

  it('serve the workflow in each format, and 404 for an unknown workspace', async () => {
    const base = await serve();
    expect(await (await fetch(`${base}/workflow/w%20x`)).text()).toBe('w x as html');
    for (const format of ['svg', 'dot', 'mmd', 'json']) expect(await (await fetch(`${base}/workflow/w%20x.${format}`)).text()).toBe(`w x as ${format}`);
    expect((await fetch(`${base}/workflow/other`)).status).toBe(404);
    expect((await fetch(`${base}/workflow/w%20x.png`)).status).toBe(404);
  });

  it('answer a malformed percent-encoding with 400', async () => {
    const base = await serve();
    const response = await fetch(`${base}/tools/%ZZ`);
    expect(response.status).toBe(400);
    expect(await response.text()).toBe('bad request: malformed percent-encoding in the path\n');
    expect((await fetch(`${base}/tools/ok`)).status).toBe(200);
  });
});
