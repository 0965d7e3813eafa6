/**
 * RecyclingNativeProducer: which C++ producer is replaced when the transport's status sampler finds it cut off, and
 * how many sends it hands a C++ producer at once. The C++
 * producers here are stand-ins whose receipts and connection the test controls (the binding itself is exercised
 * against a real broker in test/integration/native-*.test.ts).
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionStatus } from '../../../src/bus/connection-status.js';
import { FrameTooLargeError, NotConnectedError, ProducerQueueFullError, UnacknowledgedSendError } from '../../../src/bus/errors.js';
import { RecyclingNativeProducer } from '../../../src/bus/pulsar/native/producer.js';
import type { NativeProducer } from '../../../src/bus/pulsar/native/pulsar-client-module.js';

/**
 * A C++ producer whose sends wait until `receipt()` or `close()`, as the real one's wait for the broker. Like the
 * real one, it fails a send beyond `maxPending` without a receipt at once.
 */
class StandInProducer implements NativeProducer {
  connected = true;
  closed = false;
  /** The most sends it held at once. */
  mostPending = 0;
  private readonly waiting: { resolve: () => void; reject: (error: Error) => void }[] = [];

  constructor(private readonly maxPending = Infinity) {}

  get pending(): number {
    return this.waiting.length;
  }

  send(): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('Failed to send message: AlreadyClosed'));
    if (this.waiting.length >= this.maxPending) return Promise.reject(new Error('Failed to send message: ProducerQueueIsFull'));
    const sent = new Promise((resolve, reject) => this.waiting.push({ resolve: () => resolve(undefined), reject }));
    this.mostPending = Math.max(this.mostPending, this.waiting.length);
    return sent;
  }

  /** The broker's receipts for every send so far, or for the `count` oldest. */
  receipt(count = Infinity): void {
    for (const w of this.waiting.splice(0, count)) w.resolve();
  }

  close(): Promise<null> {
    this.closed = true;
    for (const w of this.waiting.splice(0)) w.reject(new Error('Failed to send message: AlreadyClosed'));
    return Promise.resolve(null);
  }

  isConnected(): boolean {
    return this.connected && !this.closed;
  }
}

const TOPIC = 'non-persistent://tg/response/agent:default';

interface Limits {
  /** The gate's limit (`maxPendingSends`). */
  maxPendingSends?: number;
  /** The stand-in C++ producer's own `maxPendingMessages`. */
  nativeMaxPending?: number;
  sendTimeoutMs?: number;
}

function producerParts(connection: ConnectionStatus, created: StandInProducer[], limits: Limits = {}) {
  return {
    topic: TOPIC,
    create: () => {
      const native = new StandInProducer(limits.nativeMaxPending ?? limits.maxPendingSends);
      created.push(native);
      return Promise.resolve(native);
    },
    attemptTimeoutMs: 1000,
    connection,
    awaitSubscriber: false,
    sendTimeoutMs: limits.sendTimeoutMs ?? 5000,
    maxPendingSends: limits.maxPendingSends ?? 1000,
    maxMessageBytes: 1024,
    tooLarge: (topic: string, size: number) => new FrameTooLargeError(topic, size, 1024, size),
    logger: pino({ level: 'silent' }),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('RecyclingNativeProducer', () => {
  let producer: RecyclingNativeProducer | undefined;

  /** A producer whose C++ producers the test controls; `created` lists them in order. */
  async function openProducer(limits?: Limits): Promise<StandInProducer[]> {
    const created: StandInProducer[] = [];
    producer = await RecyclingNativeProducer.open(producerParts(new ConnectionStatus(0), created, limits));
    return created;
  }

  afterEach(async () => {
    await producer?.close();
  });

  it('keeps a producer with sends in flight whose own connection stands: its receipts still come', async () => {
    const created = await openProducer();
    const sent = producer!.send({ payload: Buffer.from('final'), properties: { id: 'a' } });
    await sleep(10);

    expect(producer!.sampleConnection()).toBe(true);
    created[0]!.receipt();

    await expect(sent).resolves.toBeUndefined();
    expect(created).toHaveLength(1);
    expect(created[0]!.closed).toBe(false);
  });

  it('replaces a producer found cut off with sends in flight, failing them so that they are sent again', async () => {
    const created = await openProducer();
    const sent = producer!.send({ payload: Buffer.from('final'), properties: { id: 'b' } });
    await sleep(10);

    // The broker unloads this producer's topic.
    created[0]!.connected = false;
    expect(producer!.sampleConnection()).toBe(false);

    await expect(sent).rejects.toBeInstanceOf(UnacknowledgedSendError);
    await sleep(10);
    expect(created).toHaveLength(2);
    expect(created[0]!.closed).toBe(true);
    expect(producer!.sampleConnection()).toBe(true);
  });

  it('replaces a cut-off producer once, however often it is sampled while the new one is created', async () => {
    const created = await openProducer();
    const sent = producer!.send({ payload: Buffer.from('final'), properties: { id: 'c' } });
    await sleep(10);

    created[0]!.connected = false;
    expect(producer!.sampleConnection()).toBe(false);
    expect(producer!.sampleConnection()).toBe(false);

    await expect(sent).rejects.toBeInstanceOf(UnacknowledgedSendError);
    await sleep(10);
    expect(created).toHaveLength(2);
    expect(created[1]!.closed).toBe(false);
  });

  it('replaces nothing that is cut off with no send in flight: the C++ producer reconnects by itself', async () => {
    const created = await openProducer();
    created[0]!.connected = false;

    expect(producer!.sampleConnection()).toBe(false);
    await sleep(10);

    expect(created).toHaveLength(1);
    expect(created[0]!.closed).toBe(false);
  });

  it('creates a new producer in place of one the transport finds stuck, with no send in flight', async () => {
    const created = await openProducer();
    created[0]!.connected = false;

    producer!.replace();
    expect(producer!.sampleConnection()).toBe(false);
    await sleep(10);

    expect(created).toHaveLength(2);
    expect(created[0]!.closed).toBe(true);
    expect(producer!.sampleConnection()).toBe(true);
    const sent = producer!.send({ payload: Buffer.from('next') });
    await sleep(10);
    created[1]!.receipt();
    await expect(sent).resolves.toBeUndefined();
  });

  it('hands the C++ producer at most its limit of sends at once; the others wait for a receipt and all go out', async () => {
    const created = await openProducer({ maxPendingSends: 3 });
    const sends = Array.from({ length: 10 }, (_, i) => producer!.send({ payload: Buffer.from(`m${i}`), properties: { id: `${i}` } }));
    const results = Promise.allSettled(sends);

    let ended = false;
    void results.then(() => (ended = true));
    while (!ended) {
      await sleep(1);
      created[0]!.receipt(1);
    }

    expect((await results).filter((r) => r.status === 'rejected')).toEqual([]);
    expect(created[0]!.mostPending).toBe(3);
  });

  it('fails a send that finds no place within the send timeout as never written', async () => {
    const created = await openProducer({ maxPendingSends: 1, sendTimeoutMs: 50 });
    const first = producer!.send({ payload: Buffer.from('held'), properties: { id: 'first' } });
    await sleep(10);

    const second = await producer!.send({ payload: Buffer.from('waits'), properties: { id: 'second' } }).catch((err: unknown) => err);

    expect(second).toBeInstanceOf(NotConnectedError);
    expect(second).toBeInstanceOf(ProducerQueueFullError);
    expect(second).toMatchObject({ retriable: true, topic: TOPIC, limit: 1 });
    expect(created[0]!.pending).toBe(1);
    created[0]!.receipt();
    await expect(first).resolves.toBeUndefined();
  });

  it('takes a send the C++ producer refuses as full for one never written', async () => {
    const created = await openProducer({ maxPendingSends: 2, nativeMaxPending: 1 });
    const first = producer!.send({ payload: Buffer.from('held'), properties: { id: 'first' } });

    await expect(producer!.send({ payload: Buffer.from('refused'), properties: { id: 'second' } })).rejects.toBeInstanceOf(NotConnectedError);
    created[0]!.receipt();
    await expect(first).resolves.toBeUndefined();
  });
});
