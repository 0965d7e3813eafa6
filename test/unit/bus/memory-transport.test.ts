import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConnectError, TransportClosedError } from '../../../src/bus/errors.js';
import { MemoryTransport } from '../../../src/bus/memory/memory-transport.js';
import type { IncomingMessage, MessageHandler, TransportStatus } from '../../../src/bus/transport.js';

const P = 'persistent://tg/flow/work';
const NP = 'non-persistent://tg/request/agent:default:default';
const text = (m: IncomingMessage): string => m.payload.toString('utf8');
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await tick();
};

describe('MemoryTransport', () => {
  let bus: MemoryTransport;
  beforeEach(() => {
    bus = new MemoryTransport();
  });
  afterEach(async () => {
    vi.useRealTimers();
    await bus.close();
  });

  function collector(autoAck = true): { seen: IncomingMessage[]; handler: MessageHandler } {
    const seen: IncomingMessage[] = [];
    return {
      seen,
      handler: async (m) => {
        seen.push(m);
        if (autoAck) await m.ack();
      },
    };
  }

  it('never calls a handler inside send', async () => {
    let sending = false;
    const calledDuringSend: boolean[] = [];
    await bus.subscribe({
      topic: NP,
      subscription: 's',
      subscriptionType: 'Shared',
      handler: async (m) => {
        calledDuringSend.push(sending);
        await m.ack();
      },
    });
    const producer = await bus.createProducer(NP);
    sending = true;
    const sent = producer.send({ payload: Buffer.from('x') });
    sending = false;
    await sent;
    await settle();
    expect(calledDuringSend).toEqual([false]);
  });

  it('gives every subscription its own copy', async () => {
    const a = collector();
    const b = collector();
    await bus.subscribe({ topic: NP, subscription: 'a', subscriptionType: 'Exclusive', handler: a.handler });
    await bus.subscribe({ topic: NP, subscription: 'b', subscriptionType: 'Shared', handler: b.handler });
    const producer = await bus.createProducer(NP);
    await producer.send({ payload: Buffer.from('both'), properties: { id: '1' } });
    await settle();
    expect(a.seen.map(text)).toEqual(['both']);
    expect(b.seen.map(text)).toEqual(['both']);
    expect(a.seen[0]?.messageId).toBe(b.seen[0]?.messageId);
  });

  it('hands the messages of a Shared subscription round robin to its consumers', async () => {
    const a = collector();
    const b = collector();
    await bus.subscribe({ topic: P, subscription: 's', subscriptionType: 'Shared', handler: a.handler });
    await bus.subscribe({ topic: P, subscription: 's', subscriptionType: 'Shared', handler: b.handler });
    const producer = await bus.createProducer(P);
    for (const t of ['1', '2', '3', '4']) await producer.send({ payload: Buffer.from(t) });
    await settle();
    expect(a.seen.map(text)).toEqual(['1', '3']);
    expect(b.seen.map(text)).toEqual(['2', '4']);
  });

  it('hands every message of one key to one Key_Shared consumer, and a closing consumer’s held keys to the others', async () => {
    const a = collector(false);
    const b = collector(false);
    const consumerA = await bus.subscribe({ topic: P, subscription: 'k', subscriptionType: 'Key_Shared', handler: a.handler });
    await bus.subscribe({ topic: P, subscription: 'k', subscriptionType: 'Key_Shared', handler: b.handler });
    const producer = await bus.createProducer(P);
    const keys = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6'];
    for (const round of ['x', 'y']) for (const key of keys) await producer.send({ payload: Buffer.from(`${key}-${round}`), key });
    await settle();
    const keysOf = (seen: IncomingMessage[]) => new Set(seen.map((m) => text(m).split('-')[0] ?? ''));
    // Each key went to exactly one consumer, both rounds, in order.
    for (const key of keys) expect(keysOf(a.seen).has(key) !== keysOf(b.seen).has(key)).toBe(true);
    for (const seen of [a.seen, b.seen]) {
      for (const key of keysOf(seen)) expect(seen.filter((m) => text(m).startsWith(key)).map(text)).toEqual([`${key}-x`, `${key}-y`]);
    }
    expect(a.seen.length).toBeGreaterThan(0);
    expect(b.seen.length).toBeGreaterThan(0);
    // A's unacknowledged messages go to B when A closes: its keys now belong to B.
    const heldByA = a.seen.map(text);
    await consumerA.close();
    await settle();
    expect(b.seen.map(text)).toEqual(expect.arrayContaining(heldByA));
    expect(b.seen).toHaveLength(keys.length * 2);
  });

  it('refuses a second Exclusive consumer and a consumer of another type with a retriable 409', async () => {
    await bus.subscribe({ topic: NP, subscription: 'x', subscriptionType: 'Exclusive', handler: () => undefined });
    const second = bus.subscribe({ topic: NP, subscription: 'x', subscriptionType: 'Exclusive', handler: () => undefined });
    await expect(second).rejects.toBeInstanceOf(ConnectError);
    await expect(second).rejects.toMatchObject({ status: 409, retriable: true });
    const shared = bus.subscribe({ topic: NP, subscription: 'x', subscriptionType: 'Shared', handler: () => undefined });
    await expect(shared).rejects.toThrow(/different type/);
  });

  it('delivers a Failover subscription to its first consumer until that one closes', async () => {
    const a = collector();
    const b = collector();
    const first = await bus.subscribe({ topic: P, subscription: 'f', subscriptionType: 'Failover', handler: a.handler });
    await bus.subscribe({ topic: P, subscription: 'f', subscriptionType: 'Failover', handler: b.handler });
    const producer = await bus.createProducer(P);
    await producer.send({ payload: Buffer.from('1') });
    await settle();
    await first.close();
    await producer.send({ payload: Buffer.from('2') });
    await settle();
    expect(a.seen.map(text)).toEqual(['1']);
    expect(b.seen.map(text)).toEqual(['2']);
  });

  it('delivers at most receiverQueueSize unacknowledged messages to a consumer', async () => {
    const c = collector(false);
    await bus.subscribe({ topic: P, subscription: 's', subscriptionType: 'Shared', receiverQueueSize: 2, handler: c.handler });
    const producer = await bus.createProducer(P);
    for (const t of ['1', '2', '3']) await producer.send({ payload: Buffer.from(t) });
    await settle();
    expect(c.seen.map(text)).toEqual(['1', '2']);
    expect(bus.subscriptions(P)).toEqual([{ name: 's', type: 'Shared', consumers: 1, backlog: 1, unacked: 2 }]);
    await c.seen[0]?.ack();
    await settle();
    expect(c.seen.map(text)).toEqual(['1', '2', '3']);
  });

  it('redelivers a nacked message after the delay with redeliveryCount + 1, and ignores a second settle', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const c = collector(false);
    await bus.subscribe({
      topic: P,
      subscription: 's',
      subscriptionType: 'Shared',
      negativeAckRedeliveryDelayMs: 500,
      handler: c.handler,
    });
    const producer = await bus.createProducer(P);
    await producer.send({ payload: Buffer.from('again'), properties: { id: 'r' } });
    await settle();
    await c.seen[0]?.nack();
    await c.seen[0]?.ack();
    await vi.advanceTimersByTimeAsync(499);
    await settle();
    expect(c.seen).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await settle();
    expect(c.seen.map((m) => [text(m), m.redeliveryCount, m.properties.id])).toEqual([
      ['again', 0, 'r'],
      ['again', 1, 'r'],
    ]);
  });

  it('drops a nacked message on a non-persistent topic, and keeps the count at 0 on Exclusive subscriptions', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const np = collector(false);
    const ex = collector(false);
    await bus.subscribe({ topic: NP, subscription: 's', subscriptionType: 'Shared', negativeAckRedeliveryDelayMs: 1, handler: np.handler });
    await bus.subscribe({ topic: P, subscription: 'x', subscriptionType: 'Exclusive', negativeAckRedeliveryDelayMs: 1, handler: ex.handler });
    await (await bus.createProducer(NP)).send({ payload: Buffer.from('once') });
    await (await bus.createProducer(P)).send({ payload: Buffer.from('again') });
    await settle();
    expect(ex.seen.length + np.seen.length).toBe(2);
    await np.seen[0]?.nack();
    await ex.seen[0]?.nack();
    // Twenty times the redelivery delay: the persistent one is back, the non-persistent one never comes.
    await vi.advanceTimersByTimeAsync(20);
    await settle();
    expect(ex.seen).toHaveLength(2);
    expect(np.seen).toHaveLength(1);
    expect(ex.seen.map((m) => m.redeliveryCount)).toEqual([0, 0]);
  });

  it('gives a closing consumer’s unacknowledged messages back on a persistent topic only', async () => {
    for (const [topic, expected] of [
      [P, ['kept']],
      [NP, []],
    ] as const) {
      const first = collector(false);
      const consumer = await bus.subscribe({ topic, subscription: 's', subscriptionType: 'Shared', handler: first.handler });
      const second = collector();
      await bus.subscribe({ topic, subscription: 's', subscriptionType: 'Shared', handler: second.handler });
      const producer = await bus.createProducer(topic);
      await producer.send({ payload: Buffer.from('kept') });
      await settle();
      expect(first.seen).toHaveLength(1);
      await consumer.close();
      await settle();
      expect(second.seen.map(text)).toEqual(expected);
    }
  });

  it('removes a non-persistent subscription with its last consumer, a persistent one only on unsubscribe', async () => {
    const np = await bus.subscribe({ topic: NP, subscription: 'n', subscriptionType: 'Exclusive', handler: () => undefined });
    const p = await bus.subscribe({ topic: P, subscription: 'p', subscriptionType: 'Exclusive', handler: () => undefined });
    await np.close();
    await p.close();
    expect(bus.subscriptions(NP)).toEqual([]);
    expect(bus.subscriptions(P).map((s) => s.name)).toEqual(['p']);
    const again = await bus.subscribe({ topic: P, subscription: 'p', subscriptionType: 'Shared', handler: () => undefined });
    await again.close({ unsubscribe: true });
    expect(bus.subscriptions(P)).toEqual([]);
  });

  it('nacks a message whose handler throws and keeps delivering', async () => {
    const seen: string[] = [];
    await bus.subscribe({
      topic: P,
      subscription: 's',
      subscriptionType: 'Shared',
      negativeAckRedeliveryDelayMs: 1,
      handler: async (m) => {
        seen.push(`${text(m)}#${m.redeliveryCount}`);
        if (m.redeliveryCount === 0 && text(m) === 'bad') throw new Error('boom');
        await m.ack();
      },
    });
    const producer = await bus.createProducer(P);
    await producer.send({ payload: Buffer.from('bad') });
    await producer.send({ payload: Buffer.from('good') });
    await vi.waitFor(() => expect(seen).toHaveLength(3));
    expect(seen).toEqual(['bad#0', 'good#0', 'bad#1']);
  });

  it('refuses work once closed, cancels pending redeliveries, and rejects a bad topic name', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    await expect(bus.createProducer('tg/flow/x')).rejects.toThrow(/not a full Pulsar topic name/);
    const c = collector(false);
    await bus.subscribe({ topic: P, subscription: 's', subscriptionType: 'Shared', negativeAckRedeliveryDelayMs: 5, handler: c.handler });
    const producer = await bus.createProducer(P);
    await producer.send({ payload: Buffer.from('x') });
    await settle();
    await c.seen[0]?.nack();
    await bus.close();
    // Four times the redelivery delay: a redelivery that was not cancelled would have come.
    await vi.advanceTimersByTimeAsync(20);
    await settle();
    expect(c.seen).toHaveLength(1);
    expect(bus.status()).toEqual({ connected: false, detail: 'memory transport closed', epoch: 0 });
    await expect(producer.send({ payload: Buffer.from('y') })).rejects.toBeInstanceOf(TransportClosedError);
    await expect(bus.createProducer(P)).rejects.toBeInstanceOf(TransportClosedError);
  });

  it('refuses sends on a closed producer', async () => {
    const producer = await bus.createProducer(P);
    await producer.close();
    await expect(producer.send({ payload: Buffer.from('x') })).rejects.toBeInstanceOf(TransportClosedError);
  });

  it('pushes status changes: a dropped connection starts a new epoch, its restoration reconnects', async () => {
    const events: TransportStatus[] = [];
    const stop = bus.onStatus((status) => events.push(status));
    expect(bus.status()).toEqual({ connected: true, epoch: 0 });
    bus.dropConnection();
    bus.dropConnection();
    bus.restoreConnection();
    bus.dropConnection();
    stop();
    bus.restoreConnection();
    expect(events).toEqual([
      { connected: false, detail: 'memory transport: connection dropped', epoch: 1 },
      { connected: true, epoch: 1 },
      { connected: false, detail: 'memory transport: connection dropped', epoch: 2 },
    ]);
    expect(bus.status()).toEqual({ connected: true, epoch: 2 });
  });

  it('while the connection is down, refuses sends and loses what a non-persistent subscription had in flight', async () => {
    const np = collector(false);
    const p = collector(false);
    await bus.subscribe({ topic: NP, subscription: 'np', subscriptionType: 'Shared', handler: np.handler });
    await bus.subscribe({ topic: P, subscription: 'p', subscriptionType: 'Shared', handler: p.handler });
    const toNp = await bus.createProducer(NP);
    const toP = await bus.createProducer(P);
    await toNp.send({ payload: Buffer.from('np-before') });
    await toP.send({ payload: Buffer.from('p-before') });
    bus.dropConnection();
    await expect(toNp.send({ payload: Buffer.from('np-during') })).rejects.toMatchObject({ retriable: true });
    await settle();
    expect(np.seen).toHaveLength(0);
    bus.restoreConnection();
    await toNp.send({ payload: Buffer.from('np-after') });
    await vi.waitFor(() => expect(np.seen.map((m) => m.payload.toString())).toEqual(['np-after']));
    await vi.waitFor(() => expect(p.seen.map((m) => m.payload.toString())).toEqual(['p-before']));
  });
});
