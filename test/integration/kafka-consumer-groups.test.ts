/**
 * The Kafka transport's consumer groups when a member comes or goes, against the run's real Kafka broker
 * (test/support/global-brokers.ts), beside plain kafkajs consumers as the other members (as a TrustGraph
 * service's would be).
 *
 * - A partition handed over is read from the group's committed offset, not from where the subscription was
 *   placed when it joined; a message finished after its partition went to another member does not move the
 *   group's offset back.
 * - kafkajs starts a failed consumer again only after an error it counts as passing. Here the broker refuses
 *   the consumer's join (INCONSISTENT_GROUP_PROTOCOL: the group is held by a member that offers another
 *   assignor), which kafkajs does not retry: the transport says so, starts the consumer again until the group
 *   takes it, and the subscription then reads.
 */
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel, type Consumer as KafkaConsumer, type ConsumerConfig } from 'kafkajs';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { roundRobinAssigner, stickyRoundRobinAssigner } from '../../src/bus/kafka/assigner.js';
import { KafkaTransport } from '../../src/bus/kafka/kafka-transport.js';
import { kafkaTopicFor } from '../../src/bus/kafka/topology.js';
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

  /** The offset the group has committed on the topic's one partition ('-1': none). */
  async function committedOffset(topic: string, groupId: string): Promise<string> {
    const admin = new Kafka({ brokers: [kafkaBootstrapServers], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const [offsets] = await admin.fetchOffsets({ groupId, topics: [kafkaTopicFor(topic).name] });
      return offsets!.partitions[0]!.offset;
    } finally {
      await admin.disconnect();
    }
  }

  async function leave(consumer: KafkaConsumer): Promise<void> {
    others.splice(others.indexOf(consumer), 1);
    await consumer.disconnect();
  }

  const explain = (): string => `status ${JSON.stringify(transport.status())}; the transport's last log lines:\n${transportLog.slice(-15).join('')}`;

  async function send(producer: Producer, ...texts: string[]): Promise<void> {
    for (const text of texts) await producer.send({ payload: Buffer.from(text) });
  }

  it("reads a partition handed over from the group's committed offset, not from where it was placed when it joined", async () => {
    const { topic, subscription } = setUp();
    const producer = await transport.createProducer(topic);
    await send(producer, 'before anyone reads');
    // A member that has committed nothing holds the partition: its member id ('a-…') sorts before the
    // transport's ('tg-agent-…'), so the round-robin assignor keeps it there when the transport joins.
    const firstReads: string[] = [];
    const first = await member(topic, { groupId: subscription, clientId: 'a-member', partitionAssigners: [roundRobinAssigner] }, firstReads);
    // The group has committed nothing: the subscription is placed where the topic ends now.
    const received = await subscribe(topic, subscription);
    await send(producer, 'read by the first member', 'read by it too');
    await vi.waitFor(() => expect(firstReads).toEqual(['read by the first member', 'read by it too']), { timeout: 30_000, interval: 50 });
    // It commits what it read as it leaves; the transport's consumer takes the partition from there.
    await leave(first);
    await send(producer, 'after the handover');
    await vi.waitFor(() => expect(received, explain()).toContain('after the handover'), { timeout: 30_000, interval: 50 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(received).toEqual(['after the handover']);
  });

  it("leaves the group's offset alone when it finishes a message of a partition it no longer holds", async () => {
    const { topic, subscription } = setUp();
    const producer = await transport.createProducer(topic);
    await send(producer, 'makes the topic');
    let release = (): void => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const received = await subscribe(topic, subscription, (text) => (text === 'slow' ? released : Promise.resolve()));
    await send(producer, 'slow');
    await vi.waitFor(() => expect(received, explain()).toEqual(['slow']), { timeout: 30_000, interval: 50 });
    // Another member takes the partition while 'slow' is unfinished: it says it holds the partition too (as a
    // member that read it before a restart may), and of two that say so the first by member id keeps it. It reads
    // 'slow' again from the committed offset, reads what comes next, and commits past both.
    const otherReads: string[] = [];
    const claimsIt = stickyRoundRobinAssigner(() => ({ [kafkaTopicFor(topic).name]: [0] }));
    const other = await member(topic, { groupId: subscription, clientId: 'a-member', partitionAssigners: [claimsIt] }, otherReads);
    await send(producer, 'read by the other member');
    await vi.waitFor(() => expect(otherReads).toEqual(['slow', 'read by the other member']), { timeout: 30_000, interval: 50 });
    await vi.waitFor(async () => expect(await committedOffset(topic, subscription)).toBe('3'), { timeout: 30_000, interval: 100 });
    // 'slow' is finished now, by a member that lost its partition: the group's offset stays where its holder put it.
    release();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await committedOffset(topic, subscription)).toBe('3');
    // The partition comes back, from that offset: nothing the other member read is read again.
    await leave(other);
    await send(producer, 'after the handover');
    await vi.waitFor(() => expect(received, explain()).toContain('after the handover'), { timeout: 30_000, interval: 50 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(received).toEqual(['slow', 'after the handover']);
  });

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
