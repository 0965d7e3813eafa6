import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { BrokerDropStats } from '../../../src/observability/broker-drop-stats.js';

describe("BrokerDropStats (the broker admin API's non-persistent topic stats)", () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  it('reads msgDropRate of the watched subscription, sends the token, and skips persistent topics and failures', async () => {
    const seen: { url: string; auth: string | undefined }[] = [];
    server = createServer((req, res) => {
      seen.push({ url: req.url ?? '', auth: req.headers.authorization });
      if (req.url?.includes('missing')) {
        res.writeHead(404).end('{"reason":"Topic not found"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ msgDropRate: 9, subscriptions: { mine: { msgDropRate: 12.5 }, other: { msgDropRate: 99 } } }));
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.address() as AddressInfo).port;
    const rates: [string, number][] = [];
    const stats = new BrokerDropStats({
      adminUrl: `http://127.0.0.1:${port}/`,
      token: 'secret',
      intervalMs: 60_000,
      subscriptions: () => [
        { topic: 'non-persistent://tg/request/agent:ws:default', subscription: 'mine' },
        { topic: 'non-persistent://tg/request/missing', subscription: 'mine' },
        { topic: 'persistent://tg/flow/agent', subscription: 'mine' },
      ],
      onRate: ({ topic }, rate) => rates.push([topic, rate]),
      logger: pino({ level: 'silent' }),
    });
    await stats.poll();
    expect(rates).toEqual([['non-persistent://tg/request/agent:ws:default', 12.5]]);
    expect(seen).toEqual([
      { url: '/admin/v2/non-persistent/tg/request/agent%3Aws%3Adefault/stats', auth: 'Bearer secret' },
      { url: '/admin/v2/non-persistent/tg/request/missing/stats', auth: 'Bearer secret' },
    ]);
  });
});
