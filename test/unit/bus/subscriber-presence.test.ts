/**
 * SubscriberPresence on a cluster: the admin URL names every broker, and when the broker asked first cannot be
 * reached (killed), the next one is asked, and asked first from then on. The brokers' admin APIs are plain HTTP
 * servers answering topic stats.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SubscriberPresence } from '../../../src/bus/pulsar/subscriber-presence.js';

const TOPIC = 'non-persistent://tg/response/agent:default';
const STATS_PATH = '/admin/v2/non-persistent/tg/response/agent%3Adefault/stats';

describe('SubscriberPresence with the admin APIs of several brokers', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  });

  async function listen(server: Server): Promise<number> {
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return (server.address() as AddressInfo).port;
  }

  /** A port nothing listens on any more: a killed broker's. */
  async function refusedPort(): Promise<number> {
    const server = createServer();
    const port = await listen(server);
    servers.splice(servers.indexOf(server), 1);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }

  it('asks the next broker when the first refuses the connection, and waits until that one shows a subscriber', async () => {
    const asked: string[] = [];
    // The live broker: no subscriber on the first two looks, then one with flow permits.
    const live = createServer((req, res) => {
      asked.push(req.url ?? '');
      const consumers = asked.length > 2 ? [{ availablePermits: 1000 }] : [];
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ subscriptions: { gateway: { consumers } } }));
    });
    const livePort = await listen(live);
    const presence = new SubscriberPresence({
      adminUrl: `http://127.0.0.1:${await refusedPort()},127.0.0.1:${livePort}`,
      logger: pino({ level: 'silent' }),
      pollMs: 10,
    });

    await presence.waitFor(TOPIC, 10_000);

    expect(asked).toEqual([STATS_PATH, STATS_PATH, STATS_PATH]);
  });

  it('asks the next broker when the first fails (5xx), and asks the one that answered first from then on', async () => {
    const askedFirst: string[] = [];
    const askedSecond: string[] = [];
    const failing = createServer((req, res) => {
      askedFirst.push(req.url ?? '');
      res.writeHead(500).end('{"reason":"owner not reachable"}');
    });
    const answering = createServer((req, res) => {
      askedSecond.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ subscriptions: { gateway: { consumers: [{ availablePermits: 5 }] } } }));
    });
    const presence = new SubscriberPresence({
      adminUrl: `http://127.0.0.1:${await listen(failing)},http://127.0.0.1:${await listen(answering)}`,
      logger: pino({ level: 'silent' }),
      pollMs: 10,
    });

    await presence.waitFor(TOPIC, 10_000);
    await presence.waitFor(TOPIC, 10_000);

    expect(askedFirst).toEqual([STATS_PATH]);
    expect(askedSecond).toEqual([STATS_PATH, STATS_PATH]);
  });
});
