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

  /** Subscribes `subscription` on `on` to the test's topic; what it hears goes into `into`. */
  async function listen(on: KafkaTransport, subscription: string, into: string[]): Promise<void> {
    await on.subscribe({
      topic: 'persistent://tg/flow/restart-test',
      subscription,
      subscriptionType: 'Shared',
      handler: async (message: IncomingMessage) => {
        into.push(message.payload.toString());
        await message.ack();
      },
    });
  }

  it('reports the loss within seconds, recovers, and delivers what was published while the broker was away', async () => {
    const received: string[] = [];
    await listen(transport, 'restart-test', received);
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
    // A client that starts the moment the broker listens (an agent started with it): the broker is still
    // loading its consumer groups, and says so, and the subscription waits that out.
    const latecomer = new KafkaTransport({ brokers: [kafka.bootstrapServers] });
    const heard: string[] = [];
    try {
      await listen(latecomer, 'latecomer', heard);
      await (await latecomer.createProducer('persistent://tg/flow/restart-test')).send({ payload: Buffer.from('to the latecomer') });
      await poll(() => heard.includes('to the latecomer'), 'the latecomer hearing what was published after it subscribed', 30_000);
    } finally {
      await latecomer.close();
    }
    await poll(() => transport.status().connected, 'the transport connected again', 60_000);
    await sent;
    await poll(() => received.includes('while away') && received.includes('to the latecomer'), 'the messages published while the broker was away and after', 30_000);
    // Each once; the last two in either order (the first transport publishes once it has rejoined and settled).
    expect([...received].sort()).toEqual(['before', 'to the latecomer', 'while away']);
  }, 150_000);
});
