import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../../dev/ports.js';
import { LokiReachability } from '../../../src/observability/loki-reachability.js';
import { capturingLogger } from '../../support/log-capture.js';

describe('LokiReachability', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  /** A push endpoint answering `status()`; records what it was sent. */
  async function lokiAt(status: () => number): Promise<{ url: string; bodies: string[]; auth: (string | undefined)[] }> {
    const bodies: string[] = [];
    const auth: (string | undefined)[] = [];
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        bodies.push(body);
        auth.push(request.headers.authorization);
        response.writeHead(status()).end();
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const address = server.address() as { port: number };
    return { url: `http://127.0.0.1:${address.port}/loki/api/v1/push`, bodies, auth };
  }

  it('warns once while Loki refuses, says once when it takes lines again, and pushes an empty batch with the credentials', async () => {
    let status = 500;
    const loki = await lokiAt(() => status);
    const logs = capturingLogger();
    const watch = new LokiReachability({ url: loki.url, basicAuth: { username: 'u', password: 'p' }, logger: logs.logger });

    expect(await watch.check()).toBe(false);
    expect(await watch.check()).toBe(false);
    expect(watch.problem).toBe('HTTP 500 Internal Server Error');
    status = 204;
    expect(await watch.check()).toBe(true);
    expect(await watch.check()).toBe(true);
    expect(watch.problem).toBeUndefined();

    const said = logs.lines.map((line) => [line.level, line.msg]);
    expect(said).toEqual([
      [40, expect.stringMatching(/^Loki does not take our log lines \(HTTP 500 Internal Server Error\); logs go to stdout only.*--no-loki-enabled$/)],
      [30, 'Loki takes our log lines again'],
    ]);
    expect(loki.bodies).toEqual(Array(4).fill('{"streams":[]}'));
    expect(loki.auth[0]).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`);
  });

  it('names the reason when nothing listens', async () => {
    const logs = capturingLogger();
    const port = await freePort();
    const watch = new LokiReachability({ url: `http://127.0.0.1:${port}/loki/api/v1/push`, logger: logs.logger });
    expect(await watch.check()).toBe(false);
    expect(watch.problem).toBe(`fetch failed: connect ECONNREFUSED 127.0.0.1:${port}`);
    expect(logs.lines).toHaveLength(1);
  });
});
