/**
 * The two message shapes the build's patch (scripts/native-patches/) adds to the native binding, used by the
 * native transport to keep wrapped native objects off the hot path: V8 frees those only in a full collection
 * and then finalizes all of them at once on the event loop (bench:reload measured blocks of 70–130 ms).
 *   - `plainMessages: true` on a consumer: the listener gets a plain object, not a Message;
 *   - `discardMessageId: true` on a send: the promise resolves with undefined, not a MessageId.
 * Without either option the binding behaves as published.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokerUrls } from '../support/transport-contract.js';
import { testTransports } from '../support/transports.js';

interface Received {
  readonly shape: Record<string, unknown>;
}

describe.runIf(testTransports().includes('native'))('the patched native binding', () => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let client: any;

  beforeAll(() => {
    const { Client } = createRequire(import.meta.url)('pulsar-client');
    client = new Client({ serviceUrl: brokerUrls().serviceUrl, log: () => undefined });
  });
  afterAll(async () => {
    await client?.close();
  });

  /** Subscribes, sends one message with `sendOptions`, and returns what the listener got and what send resolved to. */
  async function roundTrip(consumerOptions: Record<string, unknown>, sendOptions: Record<string, unknown>): Promise<{ received: Received; sent: unknown }> {
    const topic = `non-persistent://public/default/shape-${randomUUID()}`;
    let resolve!: (r: Received) => void;
    const got = new Promise<Received>((r) => (resolve = r));
    const consumer = await client.subscribe({
      topic,
      subscription: 'shape',
      subscriptionType: 'Exclusive',
      ...consumerOptions,
      listener: (message: Record<string, unknown>) => resolve({ shape: message }),
    });
    const producer = await client.createProducer({ topic, batchingEnabled: false });
    try {
      const sent = await producer.send({ data: Buffer.from('hello'), properties: { id: 'request-1', kind: 'test' }, ...sendOptions });
      return { received: await got, sent };
    } finally {
      await producer.close();
      await consumer.close();
    }
  }

  it('hands a consumer with plainMessages a plain copy of each message, id included', async () => {
    const { received } = await roundTrip({ plainMessages: true }, {});
    const message = received.shape;
    expect(typeof message.getData).toBe('undefined');
    expect(Buffer.isBuffer(message.data) && (message.data as Buffer).toString()).toBe('hello');
    expect(message.properties).toEqual({ id: 'request-1', kind: 'test' });
    expect(message.redeliveryCount).toBe(0);
    expect(message.topicName).toMatch(/^non-persistent:\/\/public\/default\/shape-/);
    // The same text MessageId.toString() gives: (ledger,entry,partition,batch index).
    expect(message.messageId).toMatch(/^\(-?\d+,-?\d+,-?\d+,-?\d+\)$/);
  });

  it('hands a consumer without it a Message, as published', async () => {
    const { received } = await roundTrip({}, {});
    const message = received.shape as { getData(): Buffer; getProperties(): Record<string, string> };
    expect(typeof message.getData).toBe('function');
    expect(message.getData().toString()).toBe('hello');
    expect({ ...message.getProperties() }).toEqual({ id: 'request-1', kind: 'test' });
  });

  it('resolves a send with discardMessageId with undefined, and one without it with a MessageId', async () => {
    const discarded = await roundTrip({ plainMessages: true }, { discardMessageId: true });
    expect(discarded.sent).toBeUndefined();
    const kept = await roundTrip({ plainMessages: true }, {});
    expect(String(kept.sent)).toMatch(/^\(-?\d+,-?\d+,-?\d+,-?\d+\)$/);
  });
});
