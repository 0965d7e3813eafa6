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
    },
    pino({ level: 'silent' }),
    listingToken === undefined ? {} : { listingToken },
  );
  const port = await server.listen(0, '127.0.0.1');
  return `http://127.0.0.1:${port}`;
}

describe('the HTTP endpoints', () => {
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
  });

  it('answer a malformed percent-encoding with 400', async () => {
    const base = await serve();
    const response = await fetch(`${base}/tools/%ZZ`);
    expect(response.status).toBe(400);
    expect(await response.text()).toBe('bad request: malformed percent-encoding in the path\n');
    expect((await fetch(`${base}/tools/ok`)).status).toBe(200);
  });
});
