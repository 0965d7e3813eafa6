/**
 * The Kafka and RabbitMQ transports across a broker crash, each on a node of this file's own
 * (dev/kafka-broker.ts, dev/rabbitmq-broker.ts): the transport says it is not connected within seconds (what
 * `/readyz` reports), is connected again once the broker is back, and a message published while the broker
 * was away is delivered once it is back.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaUnavailable, startKafka } from '../../dev/kafka-broker.js';
import { rabbitMqUnavailable, startRabbitMq } from '../../dev/rabbitmq-broker.js';
import { KafkaTransport } from '../../src/bus/kafka/kafka-transport.js';
import { RabbitMqTransport } from '../../src/bus/rabbitmq/rabbitmq-transport.js';
import type { IncomingMessage, Transport } from '../../src/bus/transport.js';

/** What the transports logged (debug and up), told when a wait fails: the reconnect as the transport saw it. */
const transportLog: string[] = [];
const logger = pino({ level: 'debug' }, { write: (line: string) => void transportLog.push(line.slice(0, 300)) });

/** A node of the test's own, and a transport to it. */
interface Backend {
  readonly name: string;
  readonly missing: string | undefined;
  start(): Promise<{ kill(signal: 'SIGKILL'): Promise<void>; start(): Promise<void>; stop(): Promise<void>; connect(settleMs?: number): Transport }>;
}

/**
 * How long the transport under test lets a publish wait for the broker: longer than the broker's restart can take
 * on a busy machine (a JVM or an Erlang VM starting beside a whole test run), so the send below waits the restart out
 * whatever its length, as an agent's publish retry does.
 */
const SEND_WAIT_MS = 120_000;

function waitOptions(settleMs: number | undefined): { sendTimeoutMs: number; reconnectSettleMs?: number } {
  return { sendTimeoutMs: SEND_WAIT_MS, ...(settleMs === undefined ? {} : { reconnectSettleMs: settleMs }) };
}

const BACKENDS: Backend[] = [
  {
    name: 'Kafka',
    missing: kafkaUnavailable(),
    async start() {
      const kafka = await startKafka();
      return Object.assign(kafka, { connect: (settleMs?: number) => new KafkaTransport({ logger, brokers: [kafka.bootstrapServers], ...waitOptions(settleMs) }) });
    },
  },
  {
    name: 'RabbitMQ',
    missing: rabbitMqUnavailable(),
    async start() {
      const rabbit = await startRabbitMq();
      return Object.assign(rabbit, { connect: (settleMs?: number) => new RabbitMqTransport({ logger, url: rabbit.url, ...waitOptions(settleMs) }) });
    },
  },
];

describe.each(BACKENDS)('the $name transport across a broker crash', ({ missing, start }) => {
  let node: Awaited<ReturnType<Backend['start']>>;
  let transport: Transport;

  beforeAll(async () => {
    if (missing !== undefined && process.env.CI !== 'true') return;
    node = await start();
    transport = node.connect(500);
  }, 180_000);

  afterAll(async () => {
    await transport?.close();
    await node?.stop();
  });

  async function poll(condition: () => boolean, what: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (Date.now() > deadline) {
        throw new Error(`${what}: not within ${timeoutMs} ms (status ${JSON.stringify(transport.status())}); the transports' last log lines:\n${transportLog.slice(-20).join('')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Subscribes `subscription` on `on` to the test's topic; what it hears goes into `into`. */
  async function listen(on: Transport, subscription: string, into: string[]): Promise<void> {
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

  it.skipIf(missing !== undefined && process.env.CI !== 'true')('reports the loss within seconds, recovers, and delivers what was published while the broker was away', async () => {
    const received: string[] = [];
    await listen(transport, 'restart-test', received);
    const producer = await transport.createProducer('persistent://tg/flow/restart-test');
    await producer.send({ payload: Buffer.from('before') });
    await poll(() => received.includes('before'), 'the message before the crash', 15_000);
    expect(received).toEqual(['before']);
    const epoch = transport.status().epoch;

    await node.kill('SIGKILL');
    await poll(() => !transport.status().connected, 'the transport saying it lost the broker', 15_000);
    expect(transport.status().epoch).toBeGreaterThan(epoch);
    // Published while the broker is away: the send waits for it to be back. Its outcome is kept (never left
    // to reject unheard) and checked below.
    const sent = producer.send({ payload: Buffer.from('while away') }).then(
      () => 'sent',
      (error: unknown) => `not sent: ${String(error)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await node.start();
    // A client that starts the moment the broker listens (an agent started with it): a Kafka broker is still
    // loading its consumer groups, and says so, and the subscription waits that out.
    const latecomer = node.connect();
    const heard: string[] = [];
    try {
      await listen(latecomer, 'latecomer', heard);
      await (await latecomer.createProducer('persistent://tg/flow/restart-test')).send({ payload: Buffer.from('to the latecomer') });
      await poll(() => heard.includes('to the latecomer'), 'the latecomer hearing what was published after it subscribed', 30_000);
    } finally {
      await latecomer.close();
    }
    await poll(() => transport.status().connected, 'the transport connected again', 60_000);
    expect(await sent).toBe('sent');
    // Published by another client once the first is connected again: the subscription made before the crash gets
    // what is published after it. ('to the latecomer' may reach it too, or not: RabbitMQ confirmed it but, still
    // recovering its queues from the crash, routed it to none of those made before; seen once in a busy CI run.)
    const publisher = node.connect();
    try {
      await (await publisher.createProducer('persistent://tg/flow/restart-test')).send({ payload: Buffer.from('after the restart') });
    } finally {
      await publisher.close();
    }
    await poll(() => received.includes('while away') && received.includes('after the restart'), `the messages published while the broker was away and after (received ${JSON.stringify(received)})`, 30_000);
    // Each once, in either order (the first transport publishes once it has rejoined and settled). 'before' may
    // come a second time: delivery is at least once, and its acknowledgement (a committed offset, an AMQP ack,
    // neither confirmed by the broker) may not have been stored before the crash.
    expect(received.filter((m) => m === 'while away' || m === 'after the restart').sort()).toEqual(['after the restart', 'while away']);
    expect(received.filter((m) => m === 'to the latecomer').length).toBeLessThanOrEqual(1);
    expect(received.filter((m) => m === 'before').length).toBeLessThanOrEqual(2);
    expect(received.filter((m) => !['before', 'while away', 'after the restart', 'to the latecomer'].includes(m))).toEqual([]);
  }, 300_000);
});
