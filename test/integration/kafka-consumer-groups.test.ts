/**
 * The Kafka transport's consumer groups when a member comes or goes, against the run's real Kafka broker
 * (test/support/global-brokers.ts), beside plain kafkajs consumers as the other members (as a TrustGraph
 * service's would be).
 *
 * - kafkajs starts a failed consumer again only after an error it counts as passing. Here the broker refuses
 *   the consumer's join (INCONSISTENT_GROUP_PROTOCOL: the group is held by a member that offers another
 *   assignor), which kafkajs does not retry: the transport says so, starts the consumer again until the group
 *   takes it, and the subscription then reads.
 */
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel, type Consumer as KafkaConsumer, type ConsumerConfig } from 'kafkajs';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { KafkaTransport } from '../../src/bus/kafka-transport.js';
import { kafkaTopicFor } from '../../src/bus/kafka-topology.js';
import type { Producer } from '../../src/bus/transport.js';

const kafkaBootstrapServers = inject('kafkaBootstrapServers');

/** The transport's log, told when an expectation fails. */
const transportLog: string[] = [];
const logger = pino({ level: 'debug' }, { write: (line: string) => void transportLog.push(line.slice(0, 400)) });

describe.skipIf(!kafkaBootstrapServers)('the Kafka transport as a consumer group changes', () => {
  let transport: KafkaTransport;
  let others: KafkaConsumer[];
  let name: string;

  afterEach(async () => {
    for (const other of others) await other.disconnect();
    await transport.close();
  });

  function setUp(): { topic: string; subscription: string } {
    name = `groups-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
    transport = new KafkaTransport({ brokers: [kafkaBootstrapServers], logger, reconnectSettleMs: 0 });
    others = [];
    return { topic: `persistent://tg/flow/${name}`, subscription: `svc-${name}` };
  }

  /** A plain kafkajs member of `groupId` reading `topic`, once it has joined; what it reads goes into `into`. */
  async function member(topic: string, config: ConsumerConfig & { clientId?: string }, into: string[] = []): Promise<KafkaConsumer> {
    const { clientId = 'other', ...consumerConfig } = config;
    const consumer = new Kafka({ brokers: [kafkaBootstrapServers], clientId, logLevel: logLevel.NOTHING }).consumer(consumerConfig);
    others.push(consumer);
    let joined = false;
    consumer.on(consumer.events.GROUP_JOIN, () => (joined = true));
    await consumer.connect();
    await consumer.subscribe({ topic: kafkaTopicFor(topic).name });
    await consumer.run({ eachMessage: async ({ message }) => void into.push(String(message.value)) });
    await vi.waitFor(() => expect(joined).toBe(true), { timeout: 30_000, interval: 50 });
    return consumer;
  }

  /**
   * Subscribes through the transport; returns what the subscription receives, each acknowledged once `finish`
   * (if given) resolves for it.
   */
  async function subscribe(topic: string, subscription: string, finish?: (text: string) => Promise<void>): Promise<string[]> {
    const received: string[] = [];
    await transport.subscribe({
      topic,
      subscription,
      subscriptionType: 'Shared',
      handler: async (message) => {
        const text = message.payload.toString();
        received.push(text);
        await finish?.(text);
        await message.ack();
      },
    });
    return received;
  }

  async function leave(consumer: KafkaConsumer): Promise<void> {
    others.splice(others.indexOf(consumer), 1);
    await consumer.disconnect();
  }

  const explain = (): string => `status ${JSON.stringify(transport.status())}; the transport's last log lines:\n${transportLog.slice(-15).join('')}`;

  async function send(producer: Producer, ...texts: string[]): Promise<void> {
    for (const text of texts) await producer.send({ payload: Buffer.from(text) });
  }

  it('starts a consumer that kafkajs stopped for good again, until its group takes it, and then reads', async () => {
    const { topic, subscription } = setUp();
    const producer = await transport.createProducer(topic);
    await send(producer, 'makes the topic');
    // A member with kafkajs's own assignor (`RoundRobinAssigner`, not `roundrobin`) holds the group.
    const holder = await member(topic, { groupId: subscription });
    const received = await subscribe(topic, subscription);
    await vi.waitFor(() => expect(transport.status(), explain()).toMatchObject({ connected: false, detail: expect.stringContaining('incompatible') }), { timeout: 30_000, interval: 50 });
    await leave(holder);
    // The publish waits for the transport to be connected again: for the consumer to be in its group.
    await send(producer, 'after the group took it');
    await vi.waitFor(() => expect(received, explain()).toContain('after the group took it'), { timeout: 30_000, interval: 50 });
    expect(transport.status()).toMatchObject({ connected: true });
  });
});
