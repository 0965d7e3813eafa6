/**
 * RecyclingNativeConsumer: a C++ consumer replaced by a new subscription when the transport finds it stuck. The
 * C++ consumers here are stand-ins whose connection the test controls (the binding itself is exercised against a
 * real broker in test/integration/native-*.test.ts).
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { RecyclingNativeConsumer } from '../../../src/bus/pulsar/native/consumer.js';
import type { NativeConsumer } from '../../../src/bus/pulsar/native/pulsar-client-module.js';

class StandInConsumer implements NativeConsumer {
  connected = true;
  closed = false;
  unsubscribed = false;
  acknowledge(): Promise<null> {
    return Promise.resolve(null);
  }
  negativeAcknowledge(): void {}
  unsubscribe(): Promise<null> {
    this.unsubscribed = true;
    return Promise.resolve(null);
  }
  close(): Promise<null> {
    this.closed = true;
    return Promise.resolve(null);
  }
  isConnected(): boolean {
    return this.connected && !this.closed;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('RecyclingNativeConsumer', () => {
  let consumer: RecyclingNativeConsumer | undefined;

  /** `outcomes` says how each subscribe after the first ends: with a consumer, a failure, or never. */
  async function openConsumer(outcomes: ('ok' | 'fail' | 'hang')[] = []): Promise<StandInConsumer[]> {
    const created: StandInConsumer[] = [];
    let calls = 0;
    consumer = await RecyclingNativeConsumer.open({
      topic: 'non-persistent://tg/request/prompt:default',
      subscription: 'prompt',
      attemptTimeoutMs: 100,
      logger: pino({ level: 'silent' }),
      subscribe: () => {
        const outcome = calls === 0 ? 'ok' : (outcomes[calls - 1] ?? 'ok');
        calls++;
        if (outcome === 'fail') return Promise.reject(new Error('Failed to create consumer: ConnectError'));
        if (outcome === 'hang') return new Promise(() => undefined);
        const native = new StandInConsumer();
        created.push(native);
        return Promise.resolve(native);
      },
    });
    return created;
  }

  afterEach(async () => {
    await consumer?.close();
  });

  it('subscribes anew in place of a consumer that does not reconnect, closing the old one', async () => {
    const created = await openConsumer();
    created[0]!.connected = false;
    expect(consumer!.isConnected()).toBe(false);

    consumer!.replace();
    await sleep(10);

    expect(created).toHaveLength(2);
    expect(created[0]!.closed).toBe(true);
    expect(consumer!.isConnected()).toBe(true);
  });

  it('keeps trying while subscribing fails or hangs, and is down until it succeeds', async () => {
    const created = await openConsumer(['fail', 'hang', 'ok']);
    created[0]!.connected = false;

    consumer!.replace();
    // Asked again while the replacement is under way: one replacement only.
    consumer!.replace();
    await sleep(50);
    expect(consumer!.isConnected()).toBe(false);

    // 250–500 ms after the failure, the attempt that hangs starts; 100 ms later it is given up, and
    // 250–500 ms after that the third succeeds.
    for (let waited = 0; waited < 10_000 && !consumer!.isConnected(); waited += 50) await sleep(50);
    expect(consumer!.isConnected()).toBe(true);
    expect(created).toHaveLength(2);
  });

  it('closes at once while a replacement is under way, leaving nothing subscribed', async () => {
    const created = await openConsumer(['hang']);
    created[0]!.connected = false;
    consumer!.replace();
    await sleep(10);

    await consumer!.close({ unsubscribe: true });

    expect(created).toHaveLength(1);
    expect(created[0]!.closed).toBe(true);
    expect(consumer!.isConnected()).toBe(false);
  });

  it('unsubscribes the live consumer when asked to on close', async () => {
    const created = await openConsumer();
    await consumer!.close({ unsubscribe: true });
    expect(created[0]!.unsubscribed).toBe(true);
    expect(created[0]!.closed).toBe(true);
  });
});
