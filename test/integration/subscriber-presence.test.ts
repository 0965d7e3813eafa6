/**
 * The subscriber check that publishes after a reconnect wait for (src/bus/pulsar/subscriber-presence.ts), against the
 * real broker's admin API: a non-persistent topic nobody reads is waited on until a consumer subscribes, and an
 * admin API that cannot be asked is not waited on at all.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { SubscriberPresence } from '../../src/bus/pulsar/subscriber-presence.js';
import type { Consumer, Transport } from '../../src/bus/transport.js';
import { WebSocketTransport } from '../../src/bus/pulsar/websocket/websocket-transport.js';
import { brokerUrls, uniqueName } from '../support/transport-contract.js';

const { webSocketUrl, webServiceUrl } = brokerUrls();
const logger = pino({ level: 'silent' });

describe('subscriber presence from the broker admin API', () => {
  let transport: Transport | undefined;
  let consumer: Consumer | undefined;
  afterEach(async () => {
    await consumer?.close();
    await transport?.close();
    consumer = undefined;
    transport = undefined;
  });

  it('waits until the non-persistent topic has a subscriber with a consumer, then lets the publish go', async () => {
    const topic = `non-persistent://public/default/${uniqueName('presence')}`;
    const presence = new SubscriberPresence({ adminUrl: webServiceUrl, logger, pollMs: 100 });
    const events: string[] = [];
    const waiting = presence.waitFor(topic, 30_000).then(() => events.push('present'));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(events).toEqual([]);
    transport = new WebSocketTransport({ url: webSocketUrl, logger });
    consumer = await transport.subscribe({ topic, subscription: 'gateway', subscriptionType: 'Exclusive', handler: () => undefined });
    events.push('subscribed');
    await waiting;
    expect(events).toEqual(['subscribed', 'present']);
  });

  it('gives up at its bound when nobody subscribes', async () => {
    const topic = `non-persistent://public/default/${uniqueName('presence-none')}`;
    const presence = new SubscriberPresence({ adminUrl: webServiceUrl, logger, pollMs: 100 });
    const started = performance.now();
    await presence.waitFor(topic, 1500);
    expect(performance.now() - started).toBeGreaterThanOrEqual(1400);
  });

  it('does not wait on an admin API that cannot be asked', async () => {
    const topic = `non-persistent://public/default/${uniqueName('presence-unreachable')}`;
    // Port 9 (discard) refuses connections here: the check answers "unknown" at once.
    const presence = new SubscriberPresence({ adminUrl: 'http://127.0.0.1:9', logger, pollMs: 100 });
    const started = performance.now();
    await presence.waitFor(topic, 20_000);
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});
