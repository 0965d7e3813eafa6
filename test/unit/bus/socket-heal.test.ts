/**
 * The WebSocket socket heal on its own (src/bus/pulsar/websocket/socket-heal.ts), with sockets that are only what
 * it asks of them: how a look orders its reads, and that the topics whose stats could not be read are read again
 * soon, the first that can be starting the next look at once (the topics have an owner again; a non-persistent
 * topic drops what is published to a subscription whose consumer is not back).
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SocketHeal, type HealTarget } from '../../../src/bus/pulsar/websocket/socket-heal.js';
import type { TopicClients } from '../../../src/bus/pulsar/topic-clients.js';

const NO_CLIENTS: TopicClients = { subscriptions: new Map(), publishers: [] };

interface FakeTarget extends HealTarget {
  reopened: string[];
}

/** A socket open for a minute that the broker has said nothing on: the service's client behind it may be gone. */
function target(topic: string, subscription: string | undefined, waiting = true): FakeTarget {
  const reopened: string[] = [];
  return {
    topic,
    subscription,
    socket: { socketName: `${topic}-socket`, openForMs: () => 60_000, heardAt: () => -Infinity },
    waiting: () => waiting,
    reopen: (why) => reopened.push(why),
    reopened,
  };
}

describe('socket heal', () => {
  let heal: SocketHeal | undefined;
  afterEach(() => heal?.stop());

  it('reads the consumers\' topics before the producers\' in a look', async () => {
    const reads: string[] = [];
    heal = new SocketHeal({ read: (topic) => (reads.push(topic), Promise.resolve(undefined)), logger: pino({ level: 'silent' }), pollMs: 60_000 });
    heal.add(target('persistent://tg/flow/p1', undefined));
    heal.add(target('persistent://tg/flow/c1', 'sub'));
    heal.add(target('persistent://tg/flow/p2', undefined));
    heal.add(target('persistent://tg/flow/c2', 'sub'));
    heal.moved('a link lost');
    await heal.lookOnce();
    expect(reads).toEqual(['persistent://tg/flow/c1', 'persistent://tg/flow/c2', 'persistent://tg/flow/p1', 'persistent://tg/flow/p2']);
  });

  it('reads again every probeMs the topics whose stats it could not read, and looks at once when one can be read', async () => {
    let owned = false;
    const reads: string[] = [];
    const read = (topic: string): Promise<TopicClients | undefined> => {
      reads.push(topic);
      // No owner yet: the stats cannot say. Then the new owner has not loaded the topic: nobody is on it.
      return Promise.resolve(owned ? NO_CLIENTS : undefined);
    };
    // A tick far longer than the test: only the probe and the look it starts can reopen the consumer in time.
    heal = new SocketHeal({ read, logger: pino({ level: 'silent' }), pollMs: 60_000, probeMs: 20 });
    const consumer = target('non-persistent://tg/request/agent', 'agents');
    const idleProducer = target('non-persistent://tg/response/agent', undefined, false);
    heal.add(consumer);
    heal.add(idleProducer);
    heal.moved('a send unacknowledged');

    await heal.lookOnce();
    await vi.waitFor(() => expect(reads.length).toBeGreaterThan(3));
    // Only the topic that could not be read is read again (the idle producer's is not looked at).
    expect(new Set(reads)).toEqual(new Set(['non-persistent://tg/request/agent']));
    expect(consumer.reopened).toEqual([]);

    // The topic gets an owner: the next probe reads its stats, and the look it starts reopens the consumer.
    owned = true;
    await vi.waitFor(() => expect(consumer.reopened).toHaveLength(1));
    expect(consumer.reopened[0]).toMatch(/no consumer .* on subscription agents/);
    expect(idleProducer.reopened).toEqual([]);
  });

  it('reads only the topics it could not read between looks while their owner stays away', async () => {
    const reads: string[] = [];
    const read = (topic: string): Promise<TopicClients | undefined> => {
      reads.push(topic);
      return Promise.resolve(topic.endsWith('/down') ? undefined : { subscriptions: new Map([['sub', [`${topic}-socket`]]]), publishers: [] });
    };
    heal = new SocketHeal({ read, logger: pino({ level: 'silent' }), pollMs: 60_000, probeMs: 10 });
    const down = target('persistent://tg/flow/down', 'sub');
    const up = target('persistent://tg/flow/up', 'sub');
    heal.add(down);
    heal.add(up);
    heal.moved('a link lost');
    await heal.lookOnce();
    await vi.waitFor(() => expect(reads.filter((topic) => topic.endsWith('/down')).length).toBeGreaterThan(5));
    // The topic that can be read was read by the look alone, and nothing was reopened on unreadable stats.
    expect(reads.filter((topic) => topic.endsWith('/up'))).toHaveLength(1);
    expect([down.reopened, up.reopened]).toEqual([[], []]);
  });

  it('sweeps the consumers every sweepMs with no sign of a move, and a consumer it reopens opens the window', async () => {
    const reads: string[] = [];
    const read = (topic: string): Promise<TopicClients | undefined> => {
      reads.push(topic);
      return Promise.resolve(NO_CLIENTS);
    };
    heal = new SocketHeal({ read, logger: pino({ level: 'silent' }), pollMs: 60_000, sweepMs: 20 });
    const consumer = target('non-persistent://tg/response/agent', 'gateway');
    const producer = target('non-persistent://tg/request/agent', undefined);
    heal.add(consumer);
    heal.add(producer);
    await vi.waitFor(() => expect(consumer.reopened).toHaveLength(1));
    // The sweep reads the consumers' topics alone; the reopen opened the window, in which a look takes producers too.
    expect(reads[0]).toBe('non-persistent://tg/response/agent');
    expect(producer.reopened).toEqual([]);
    await heal.lookOnce();
    expect(producer.reopened).toHaveLength(1);
  });

  it('does not sweep when sweepMs is 0', async () => {
    const reads: string[] = [];
    heal = new SocketHeal({ read: (topic) => (reads.push(topic), Promise.resolve(NO_CLIENTS)), logger: pino({ level: 'silent' }), sweepMs: 0 });
    heal.add(target('non-persistent://tg/response/agent', 'gateway'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(reads).toEqual([]);
  });
});
