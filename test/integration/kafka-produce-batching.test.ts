/**
 * The Kafka transport's publishes, as the broker stores them (the run's real Kafka broker,
 * test/support/global-brokers.ts): what is published in one turn of the event loop goes in one produce
 * request, so one topic's messages of that turn share one record batch; a batch never holds more of one topic
 * than the broker takes in a record batch; the order of one topic's messages is kept. Read back with a plain
 * kafkajs consumer, which tells each message's record batch (its `batchContext`).
 */
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel, type Consumer as KafkaConsumer } from 'kafkajs';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { KafkaTransport } from '../../src/bus/kafka/kafka-transport.js';
import { kafkaTopicFor } from '../../src/bus/kafka/topology.js';

const kafkaBootstrapServers = inject('kafkaBootstrapServers');

interface Stored {
  text: string;
  /** The first offset of the record batch the message is in. */
  batch: string;
}

describe.skipIf(!kafkaBootstrapServers)('the Kafka transport’s publishes', () => {
  let transport: KafkaTransport | undefined;
  let reader: KafkaConsumer | undefined;

  afterEach(async () => {
    await reader?.disconnect();
    await transport?.close();
    reader = undefined;
    transport = undefined;
  });

  function topicName(): string {
    return `persistent://tg/flow/batching-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
  }

  /** Everything stored on `topic`, from its beginning, as it comes. */
  async function read(topic: string): Promise<Stored[]> {
    const stored: Stored[] = [];
    reader = new Kafka({ brokers: [kafkaBootstrapServers], clientId: 'batching-reader', logLevel: logLevel.NOTHING }).consumer({
      groupId: `batching-reader-${randomBytes(4).toString('hex')}`,
    });
    await reader.connect();
    await reader.subscribe({ topic: kafkaTopicFor(topic).name, fromBeginning: true });
    await reader.run({
      eachMessage: async ({ message }) => {
        // kafkajs decodes each record with the header of its record batch.
        const { batchContext } = message as typeof message & { batchContext: { firstOffset: string } };
        stored.push({ text: String(message.value), batch: batchContext.firstOffset });
      },
    });
    return stored;
  }

  it('sends what is published in one turn of the event loop in one record batch, in order', async () => {
    transport = new KafkaTransport({ brokers: [kafkaBootstrapServers], reconnectSettleMs: 0 });
    const topic = topicName();
    const producer = await transport.createProducer(topic);
    await producer.send({ payload: Buffer.from('first') });
    const texts = ['a', 'b', 'c', 'd', 'e'];
    await Promise.all(texts.map((text) => producer.send({ payload: Buffer.from(text), properties: { id: text } })));

    const stored = await read(topic);
    await vi.waitFor(() => expect(stored.map((s) => s.text)).toEqual(['first', ...texts]), { timeout: 20_000, interval: 50 });
    const together = stored.slice(1);
    expect(new Set(together.map((s) => s.batch)).size).toBe(1);
    expect(together[0]!.batch).not.toBe(stored[0]!.batch);
  });

  it('keeps one topic’s share of a batch under the largest message, and sends the rest in the next', async () => {
    transport = new KafkaTransport({ brokers: [kafkaBootstrapServers], reconnectSettleMs: 0, maxMessageBytes: 1000 });
    const topic = topicName();
    const producer = await transport.createProducer(topic);
    const texts = ['x', 'y', 'z'].map((letter) => letter.repeat(600));
    await Promise.all(texts.map((text) => producer.send({ payload: Buffer.from(text) })));

    const stored = await read(topic);
    await vi.waitFor(() => expect(stored.map((s) => s.text)).toEqual(texts), { timeout: 20_000, interval: 50 });
    expect(new Set(stored.map((s) => s.batch)).size).toBe(3);
  });

  it('counts what each record adds to its batch besides its payload: many small messages do not fill one batch past the limit', async () => {
    transport = new KafkaTransport({ brokers: [kafkaBootstrapServers], reconnectSettleMs: 0, maxMessageBytes: 1000 });
    const topic = topicName();
    const producer = await transport.createProducer(topic);
    // 40 × 20 bytes of payload is 800, under the limit; with each record's own fields it is not.
    const texts = Array.from({ length: 40 }, (_, i) => `message ${String(i).padStart(12, '0')}`);
    await Promise.all(texts.map((text) => producer.send({ payload: Buffer.from(text) })));

    const stored = await read(topic);
    await vi.waitFor(() => expect(stored.map((s) => s.text)).toEqual(texts), { timeout: 20_000, interval: 50 });
    expect(new Set(stored.map((s) => s.batch)).size).toBeGreaterThan(1);
  });
});
