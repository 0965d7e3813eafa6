/**
 * The Kafka transport across a broker crash, on a Kafka node of this file's own (dev/kafka-broker.ts): the
 * transport says it is not connected within seconds (what `/readyz` reports), is connected again once the
 * broker is back, and a message published while the broker was away is delivered once it is back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaUnavailable, startKafka, type KafkaHandle } from '../../dev/kafka-broker.js';
import { KafkaTransport } from '../../src/bus/kafka-transport.js';
import type { IncomingMessage } from '../../src/bus/transport.js';

const missing = kafkaUnavailable();

describe.skipIf(missing !== undefined && process.env.CI !== 'true')('the Kafka transport across a broker crash', () => {
  let kafka: KafkaHandle;
  let transport: KafkaTransport;

  beforeAll(async () => {
    kafka = await startKafka();
    transport = new KafkaTransport({ brokers: [kafka.bootstrapServers], reconnectSettleMs: 500 });
  }, 180_000);

  afterAll(async () => {
    await transport?.close();
    await kafka?.stop();
  });

  async function poll(condition: () => boolean, what: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms (status ${JSON.stringify(transport.status())})`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('reports the loss within seconds, recovers, and delivers what was published while the broker was away', async () => {
    const received: string[] = [];
    await transport.subscribe({
      topic: 'persistent://tg/flow/restart-test',
      subscription: 'restart-test',
      subscriptionType: 'Shared',
      handler: async (message: IncomingMessage) => {
        received.push(message.payload.toString());
        await message.ack();
      },
    });
    const producer = await transport.createProducer('persistent://tg/flow/restart-test');
    await producer.send({ payload: Buffer.from('before') });
    await poll(() => received.includes('before'), 'the message before the crash', 15_000);
    expect(received).toEqual(['before']);
    const epoch = transport.status().epoch;

    await kafka.kill('SIGKILL');
    await poll(() => !transport.status().connected, 'the transport saying it lost the broker', 15_000);
    expect(transport.status().epoch).toBeGreaterThan(epoch);
    // Published while the broker is away: the send waits for it to be back.
    const sent = producer.send({ payload: Buffer.from('while away') });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await kafka.start();
    await poll(() => transport.status().connected, 'the transport connected again', 60_000);
    await sent;
    await poll(() => received.includes('while away'), 'the message published while the broker was away', 30_000);
    expect(received).toEqual(['before', 'while away']);
  }, 150_000);
});
