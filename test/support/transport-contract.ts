/**
 * The transport contract (design decision 12 (docs/design.md)): the same tests for every Transport. A test file calls
 * `describeTransportContract(name, factory, options)` once per transport it can run; a transport that cannot
 * run here is still listed, as a skipped test whose title says why.
 *
 * Every test uses its own topics and subscriptions, so tests never see each other's messages, and a fresh
 * transport from the factory, closed afterwards. A failing test explains itself: what it did when (subscribe,
 * close, send, receive), the transport's status history and log, and with `webServiceUrl` the broker's own view
 * of the test's topics (each subscription's type, backlog, what it sent to which consumer, the cursor).
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { afterEach, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { ConnectError, FrameTooLargeError, TransportError } from '../../src/bus/errors.js';
import type {
  Consumer,
  IncomingMessage,
  MessageHandler,
  OutgoingMessage,
  Producer,
  SubscribeOptions,
  Transport,
} from '../../src/bus/transport.js';
import { elapsed, explained, logLines, recordStatus, subscriptionStats, untilSubscriptionGone, untilSubscriptionHasPermits, type Report, type StatusHistory } from './failure-report.js';
import { capturingLogger, type LogCapture } from './log-capture.js';

export interface TransportContractOptions {
  /** When set, the suite is reported as one skipped test whose title gives this reason. */
  skip?: string;
  /**
   * The transport refuses frames over this many bytes (the WebSocket API's text frame limit, the broker's
   * `maxMessageSize` on the binary protocol).
   */
  frameLimitBytes?: number;
  /**
   * Payload sizes for the frame-limit test: one the transport must refuse and one just under the limit that it
   * must carry. Default: sized for base64 in a text frame (a third larger than the payload).
   */
  framePayloadBytes?: { tooLarge: number; justUnder: number };
  /**
   * Publishes a message as a chunked message (split by the producer into several broker messages, as a
   * producer with chunking enabled does for payloads over maxMessageSize). When set, the suite checks that the
   * transport delivers it whole.
   */
  publishChunked?: (topic: string, payload: Buffer, properties: Record<string, string>) => Promise<void>;
  /** Payload size of that chunked message. */
  chunkedPayloadBytes?: number;
  /** How long to wait before concluding that nothing more will arrive. Default 300 ms. */
  quietMs?: number;
  /** How long to wait for an expected delivery. Default 15000 ms. */
  deliveryTimeoutMs?: number;
  /**
   * The broker's admin API (http://host:8080), for a transport to a real broker: a subscribe to a
   * non-persistent topic then waits there until the broker holds the consumer's flow permits, and a failing
   * test's report holds the stats of its topics.
   */
  webServiceUrl?: string;
  /**
   * The backend keeps what a non-persistent topic's shared subscription has not acknowledged (RabbitMQ: a
   * `request` topic's named queue), and requeues a nacked message there, as TrustGraph's RabbitMQ consumer does.
   */
  keepsNonPersistent?: boolean;
  /**
   * A subscription is a Kafka consumer group: its consumers share the topic's partitions, one reader each, and
   * nothing refuses a second consumer. On TrustGraph's one-partition topics one consumer reads at a time and
   * another takes over when it goes.
   */
  groupsSharePartitions?: boolean;
}

/**
 * The test broker's URLs: from the integration project's globalSetup (`inject`), else from `PULSAR_URL`
 * (a running broker's web service URL) and `PULSAR_SERVICE_URL`.
 */
export function brokerUrls(): { webSocketUrl: string; serviceUrl: string; webServiceUrl: string } {
  const injected = (key: 'pulsarWebSocketUrl' | 'pulsarServiceUrl'): string | undefined => {
    try {
      return inject(key);
    } catch {
      return undefined;
    }
  };
  const fromEnv = process.env.PULSAR_URL?.trim().replace(/^http/, 'ws');
  const webSocketUrl = injected('pulsarWebSocketUrl') ?? fromEnv;
  if (!webSocketUrl) {
    throw new Error(
      'no Pulsar broker: run these tests in the integration project (its globalSetup starts one) ' +
        'or set PULSAR_URL=ws://host:8080',
    );
  }
  const serviceUrl =
    injected('pulsarServiceUrl') ??
    process.env.PULSAR_SERVICE_URL?.trim() ??
    `pulsar://${new URL(webSocketUrl).hostname}:6650`;
  return { webSocketUrl, serviceUrl, webServiceUrl: webSocketUrl.replace(/^ws/, 'http') };
}

/** A topic or subscription name no other test uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

/** Collects what a consumer receives. */
export class Inbox {
  readonly messages: IncomingMessage[] = [];

  constructor(private readonly onMessage?: (message: IncomingMessage) => Promise<void> | void) {}

  readonly handler: MessageHandler = async (message) => {
    this.messages.push(message);
    await this.onMessage?.(message);
  };

  texts(): string[] {
    return this.messages.map((m) => m.payload.toString('utf8'));
  }

  async waitFor(count: number, timeoutMs: number): Promise<IncomingMessage[]> {
    await vi.waitFor(
      () => {
        if (this.messages.length < count) {
          throw new Error(`received ${this.messages.length} of ${count} messages: ${JSON.stringify(this.texts())}`);
        }
      },
      { timeout: timeoutMs, interval: 10 },
    );
    return this.messages;
  }
}

const ack = (m: IncomingMessage): Promise<void> => m.ack();
/** A payload as a report shows it: its text, or its size when it is long. */
const shortText = (payload: Buffer): string =>
  payload.length <= 40 ? JSON.stringify(payload.toString('utf8')) : `${payload.length} bytes`;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export function describeTransportContract(
  name: string,
  /** A fresh transport that logs to `logger` (the suite keeps its lines for a failing test's report). */
  factory: (logger: Logger) => Promise<Transport> | Transport,
  options: TransportContractOptions = {},
): void {
  if (options.skip !== undefined) {
    describe(`transport contract: ${name}`, () => {
      it.skip(`${name} transport skipped: ${options.skip}`, () => undefined);
    });
    return;
  }
  const quietMs = options.quietMs ?? 300;
  const timeoutMs = options.deliveryTimeoutMs ?? 15_000;

  describe(`transport contract: ${name}`, () => {
    let transport: Transport;
    /** Every consumer a test opened. */
    let consumers: Consumer[];
    /** Durable subscriptions to remove after the test. */
    let durable: Array<{ topic: string; subscription: string }>;
    /** For the failure report: the transport's log and status changes, what the test did, what it used. */
    let log: LogCapture;
    let history: StatusHistory;
    let timeline: string[];
    let topics: Set<string>;
    let subscriptions: Set<string>;
    const note = (line: string): void => {
      timeline.push(`${elapsed()} ${line}`);
    };

    beforeEach(async () => {
      log = capturingLogger('debug');
      transport = await factory(log.logger);
      history = recordStatus(transport, name);
      consumers = [];
      durable = [];
      timeline = [];
      topics = new Set();
      subscriptions = new Set();
    });

    async function report(): Promise<Report> {
      const url = options.webServiceUrl;
      const broker: Report =
        url === undefined
          ? {}
          : { "the broker's view of the test's topics": (await Promise.all([...topics].map((t) => subscriptionStats(url, t)))).flat() };
      return {
        'what the test did': timeline,
        'transport status': history.lines,
        "transport log (warnings, and lines naming the test's subscriptions)": logLines(log, [...subscriptions]),
        ...broker,
      };
    }

    /** A contract test: when it fails, its error carries the report above. */
    const contract = (title: string, body: () => Promise<void>): void => {
      it(title, () => explained(body, report));
    };

    /** Closes every consumer, then removes the durable subscriptions the test created. */
    async function cleanUp(): Promise<void> {
      for (const consumer of consumers.splice(0)) await consumer.close().catch(() => undefined);
      for (const { topic, subscription } of durable.splice(0)) {
        const remover = await subscribe(topic, subscription, new Inbox()).catch(() => undefined);
        await remover?.close({ unsubscribe: true }).catch(() => undefined);
      }
    }

    afterEach(async () => {
      history.stop();
      await cleanUp().catch(() => undefined);
      await transport.close();
    });

    const persistentTopic = (prefix: string): string => `persistent://tg/flow/${uniqueName(prefix)}`;
    const nonPersistentTopic = (prefix: string): string => `non-persistent://tg/request/${uniqueName(prefix)}`;

    async function subscribe(
      topic: string,
      subscription: string,
      inbox: Inbox,
      extra: Partial<SubscribeOptions> = {},
    ): Promise<Consumer> {
      const type = extra.subscriptionType ?? 'Shared';
      const label = `${type} consumer of ${subscription}`;
      topics.add(topic);
      subscriptions.add(subscription);
      note(`${label}: subscribing`);
      const consumer = await transport
        .subscribe({
          topic,
          subscription,
          subscriptionType: type,
          handler: async (m) => {
            note(`${label}: received ${shortText(m.payload)} (redelivery ${m.redeliveryCount})`);
            await inbox.handler(m);
          },
          ...extra,
        })
        .catch((err: unknown) => {
          note(`${label}: subscribe failed: ${String(err)}`);
          throw err;
        });
      note(`${label}: subscribed`);
      // The broker answers a subscribe before the consumer's first flow permits reach it, and a
      // non-persistent topic drops what no consumer has permits for (CI saw that drop right after a subscribe).
      if (options.webServiceUrl !== undefined && topic.startsWith('non-persistent://')) {
        await untilSubscriptionHasPermits(options.webServiceUrl, topic, subscription);
        note(`${label}: the broker holds its flow permits`);
      }
      const tracked: Consumer = {
        topic: consumer.topic,
        subscription: consumer.subscription,
        close: async (closeOptions) => {
          note(`${label}: closing${closeOptions?.unsubscribe ? ' (unsubscribe)' : ''}`);
          await consumer.close(closeOptions);
          note(`${label}: closed`);
        },
      };
      consumers.push(tracked);
      return tracked;
    }

    /** A producer whose sends go into the failure report's timeline. */
    async function createProducer(topic: string): Promise<Producer> {
      topics.add(topic);
      const producer = await transport.createProducer(topic);
      return {
        topic,
        send: async (message: OutgoingMessage) => {
          await producer.send(message);
          note(`sent ${shortText(message.payload)} to ${topic}`);
        },
        close: () => producer.close(),
      };
    }

    /** Subscribes, and removes the (durable) subscription at the end of the test. */
    async function subscribeDurable(
      topic: string,
      subscription: string,
      inbox: Inbox,
      extra: Partial<SubscribeOptions> = {},
    ): Promise<Consumer> {
      const consumer = await subscribe(topic, subscription, inbox, extra);
      durable.push({ topic, subscription });
      return consumer;
    }

    contract('delivers a published message with its payload bytes and properties', async () => {
      const topic = persistentTopic('ct-roundtrip');
      const inbox = new Inbox(ack);
      await subscribeDurable(topic, uniqueName('sub'), inbox);
      const producer = await createProducer(topic);
      const payload = Buffer.concat([Buffer.from('{"text":"héllo ✓"}', 'utf8'), Buffer.from([0, 255, 1, 128])]);
      await producer.send({ payload, properties: { id: 'req-1', note: 'a: b / c' } });

      const [message] = await inbox.waitFor(1, timeoutMs);
      expect(message?.payload.equals(payload)).toBe(true);
      expect(message?.properties).toEqual({ id: 'req-1', note: 'a: b / c' });
      expect(message?.topic).toBe(topic);
      expect(message?.redeliveryCount).toBe(0);
      expect(message?.messageId).toEqual(expect.any(String));
      expect(transport.status().connected).toBe(true);
      await producer.close();
    });

    if (options.groupsSharePartitions) {
      contract('gives each message of a Shared subscription to one of its consumers, and the partition to another when its reader closes', async () => {
        const topic = persistentTopic('ct-shared');
        const subscription = uniqueName('sub');
        const inboxes = [new Inbox(ack), new Inbox(ack), new Inbox(ack)];
        const consumers = [await subscribeDurable(topic, subscription, inboxes[0]!)];
        for (const inbox of inboxes.slice(1)) consumers.push(await subscribe(topic, subscription, inbox));
        const { epoch } = transport.status();
        const producer = await createProducer(topic);
        const sent = Array.from({ length: 20 }, (_, i) => `m${i}`);
        for (const text of sent) await producer.send({ payload: Buffer.from(text) });
        const received = (): string[] => inboxes.flatMap((inbox) => inbox.texts());
        await vi.waitFor(() => expect(received().length).toBeGreaterThanOrEqual(sent.length), { timeout: timeoutMs, interval: 10 });
        await sleep(quietMs);
        expect(received().sort()).toEqual([...sent].sort());
        // One partition: one reader at a time. Each reader in turn closes; one of the consumers left takes the
        // partition, from the offset the reader committed: nothing is delivered twice, nothing is lost.
        const open = new Set([0, 1, 2]);
        let latest = sent.at(-1)!;
        for (const handover of [1, 2]) {
          const reader = [...open].find((i) => inboxes[i]!.texts().includes(latest))!;
          open.delete(reader);
          await consumers[reader]!.close();
          latest = `after handover ${handover}`;
          sent.push(latest);
          await producer.send({ payload: Buffer.from(latest) });
          await vi.waitFor(() => expect([...open].flatMap((i) => inboxes[i]!.texts())).toContain(latest), { timeout: timeoutMs, interval: 10 });
          await sleep(quietMs);
          expect(received().sort()).toEqual([...sent].sort());
        }
        // A rebalance is not a lost connection: every consumer stayed in its group throughout.
        expect(transport.status()).toMatchObject({ connected: true, epoch });
      });
    } else {
      contract('splits the messages of a Shared subscription between its consumers', async () => {
        const topic = persistentTopic('ct-shared');
        const subscription = uniqueName('sub');
        const slowAck = async (m: IncomingMessage): Promise<void> => {
          await sleep(20);
          await m.ack();
        };
        const first = new Inbox(slowAck);
        const second = new Inbox(slowAck);
        await subscribeDurable(topic, subscription, first, { receiverQueueSize: 5 });
        await subscribe(topic, subscription, second, { receiverQueueSize: 5 });
        const producer = await createProducer(topic);
        const sent = Array.from({ length: 40 }, (_, i) => `m${i}`);
        for (const text of sent) await producer.send({ payload: Buffer.from(text) });

        await vi.waitFor(
          () => expect(first.messages.length + second.messages.length).toBeGreaterThanOrEqual(sent.length),
          { timeout: timeoutMs, interval: 10 },
        );
        await sleep(quietMs);
        expect(first.messages.length).toBeGreaterThan(0);
        expect(second.messages.length).toBeGreaterThan(0);
        expect([...first.texts(), ...second.texts()].sort()).toEqual([...sent].sort());
      });

      contract('refuses a second consumer on an Exclusive subscription, and accepts one after the first closes', async () => {
        const topic = nonPersistentTopic('ct-exclusive');
        const subscription = uniqueName('sub');
        const first = await subscribe(topic, subscription, new Inbox(ack), { subscriptionType: 'Exclusive' });

        const refused = await subscribe(topic, subscription, new Inbox(ack), { subscriptionType: 'Exclusive' }).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(refused).toBeInstanceOf(ConnectError);
        expect((refused as ConnectError).status ?? 409).toBe(409);

        await first.close();
        // The broker drops the emptied subscription only after answering the close; subscribing under its name
        // before then would join the subscription being dropped and receive nothing (docs/reliability.md).
        if (options.webServiceUrl !== undefined) await untilSubscriptionGone(options.webServiceUrl, topic, subscription);
        const inbox = new Inbox(ack);
        await subscribe(topic, subscription, inbox, { subscriptionType: 'Exclusive' });
        const producer = await createProducer(topic);
        await producer.send({ payload: Buffer.from('to the new owner') });
        await inbox.waitFor(1, timeoutMs);
      });
    }

    contract('does not deliver an acknowledged message again, but does deliver an unacknowledged one', async () => {
      const topic = persistentTopic('ct-ack');
      const subscription = uniqueName('sub');
      const inbox = new Inbox(async (m) => {
        if (m.payload.toString() === 'acked') await m.ack();
      });
      const consumer = await subscribeDurable(topic, subscription, inbox);
      const producer = await createProducer(topic);
      await producer.send({ payload: Buffer.from('acked') });
      await producer.send({ payload: Buffer.from('not acked') });
      await inbox.waitFor(2, timeoutMs);
      await sleep(quietMs);
      await consumer.close();

      const again = new Inbox(ack);
      await subscribe(topic, subscription, again);
      await again.waitFor(1, timeoutMs);
      await sleep(quietMs);
      expect(again.texts()).toEqual(['not acked']);
    });

    contract('does not deliver again what was acknowledged right before the consumer closed', async () => {
      const topic = persistentTopic('ct-ack-close');
      const subscription = uniqueName('sub');
      const inbox = new Inbox(ack);
      const consumer = await subscribeDurable(topic, subscription, inbox);
      const producer = await createProducer(topic);
      const sent = Array.from({ length: 20 }, (_, i) => `m${i}`);
      for (const text of sent) await producer.send({ payload: Buffer.from(text) });
      await inbox.waitFor(sent.length, timeoutMs);
      // No pause: acknowledgements a transport batches must be settled by close itself.
      await consumer.close();

      const again = new Inbox(ack);
      await subscribe(topic, subscription, again);
      await producer.send({ payload: Buffer.from('after') });
      await again.waitFor(1, timeoutMs);
      await sleep(quietMs);
      expect(again.texts()).toEqual(['after']);
    });

    contract('redelivers a nacked message after the nack delay with a higher redeliveryCount', async () => {
      const topic = persistentTopic('ct-nack');
      const inbox = new Inbox(async (m) => {
        if (m.redeliveryCount === 0) await m.nack();
        else await m.ack();
      });
      await subscribeDurable(topic, uniqueName('sub'), inbox, { negativeAckRedeliveryDelayMs: 100 });
      const producer = await createProducer(topic);
      await producer.send({ payload: Buffer.from('try again'), properties: { id: 'n-1' } });

      const [first, second] = await inbox.waitFor(2, timeoutMs);
      expect(first?.redeliveryCount).toBe(0);
      expect(second?.redeliveryCount).toBeGreaterThanOrEqual(1);
      expect(second?.payload.toString()).toBe('try again');
      expect(second?.properties).toEqual({ id: 'n-1' });
    });

    contract('nacks the message when the handler throws, and keeps delivering', async () => {
      const topic = persistentTopic('ct-throw');
      const inbox = new Inbox(async (m) => {
        if (m.payload.toString() === 'poison' && m.redeliveryCount === 0) throw new Error('handler failed');
        await m.ack();
      });
      await subscribeDurable(topic, uniqueName('sub'), inbox, { negativeAckRedeliveryDelayMs: 100 });
      const producer = await createProducer(topic);
      await producer.send({ payload: Buffer.from('poison') });
      await producer.send({ payload: Buffer.from('next') });

      await inbox.waitFor(3, timeoutMs);
      expect(inbox.texts().sort()).toEqual(['next', 'poison', 'poison']);
      const redelivered = inbox.messages.filter((m) => m.payload.toString() === 'poison');
      expect(redelivered[1]?.redeliveryCount).toBeGreaterThanOrEqual(1);
    });

    if (options.keepsNonPersistent) {
      contract('requeues a nacked message on a non-persistent topic, whose shared queue keeps it', async () => {
        const topic = nonPersistentTopic('ct-np-nack');
        const inbox = new Inbox((m) => (m.redeliveryCount === 0 ? m.nack() : m.ack()));
        await subscribe(topic, uniqueName('sub'), inbox, { negativeAckRedeliveryDelayMs: 100 });
        const producer = await createProducer(topic);
        await producer.send({ payload: Buffer.from('again') });
        const [first, second] = await inbox.waitFor(2, timeoutMs);
        expect([first?.redeliveryCount, second?.redeliveryCount]).toEqual([0, 1]);
        await sleep(quietMs);
        expect(inbox.texts()).toEqual(['again', 'again']);
      });
    } else {
      contract('does not redeliver a nacked message on a non-persistent topic (nothing is stored)', async () => {
        const topic = nonPersistentTopic('ct-np-nack');
        const inbox = new Inbox((m) => m.nack());
        await subscribe(topic, uniqueName('sub'), inbox, { negativeAckRedeliveryDelayMs: 100 });
        const producer = await createProducer(topic);
        await producer.send({ payload: Buffer.from('once') });
        await inbox.waitFor(1, timeoutMs);
        await sleep(Math.max(quietMs, 100) * 2);
        expect(inbox.texts()).toEqual(['once']);
      });
    }

    contract('drops messages published to a non-persistent topic while nobody subscribes', async () => {
      const topic = nonPersistentTopic('ct-drop');
      const producer = await createProducer(topic);
      await producer.send({ payload: Buffer.from('nobody hears this') });
      const inbox = new Inbox(ack);
      await subscribe(topic, uniqueName('sub'), inbox);
      await producer.send({ payload: Buffer.from('heard') });
      await inbox.waitFor(1, timeoutMs);
      await sleep(quietMs);
      expect(inbox.texts()).toEqual(['heard']);
    });

    contract('keeps messages on a persistent topic for an existing durable subscription', async () => {
      const topic = persistentTopic('ct-durable');
      const subscription = uniqueName('sub');
      const before = await subscribeDurable(topic, subscription, new Inbox(ack));
      await before.close();

      const producer = await createProducer(topic);
      for (const text of ['one', 'two', 'three']) await producer.send({ payload: Buffer.from(text) });
      const inbox = new Inbox(ack);
      await subscribe(topic, subscription, inbox, { subscriptionType: 'Exclusive' });
      await inbox.waitFor(3, timeoutMs);
      expect(inbox.texts()).toEqual(['one', 'two', 'three']);
    });

    contract('carries topic and subscription names that contain colons', async () => {
      const id = randomBytes(4).toString('hex');
      const topic = `non-persistent://tg/request/agent:ws-${id}:flow-${id}`;
      const inbox = new Inbox(ack);
      await subscribe(topic, `agent-manager--ws:${id}--flow-${id}--request`, inbox);
      const producer = await createProducer(topic);
      await producer.send({ payload: Buffer.from('colons'), properties: { id } });
      const [message] = await inbox.waitFor(1, timeoutMs);
      expect(message?.topic).toBe(topic);
      expect(message?.properties).toEqual({ id });
    });

    it.runIf(options.frameLimitBytes !== undefined)(
      'refuses a message over the frame limit before sending it, and still carries one just under it',
      async () => {
        const limit = options.frameLimitBytes as number;
        const topic = nonPersistentTopic('ct-frame');
        const inbox = new Inbox(ack);
        await subscribe(topic, uniqueName('sub'), inbox);
        const producer = await createProducer(topic);

        const sizes = options.framePayloadBytes ?? {
          tooLarge: Math.ceil((limit * 3) / 4),
          justUnder: Math.floor((limit * 3) / 4) - 1024,
        };
        const tooLarge = producer.send({ payload: Buffer.alloc(sizes.tooLarge, 1) });
        await expect(tooLarge).rejects.toBeInstanceOf(FrameTooLargeError);
        await expect(tooLarge).rejects.toMatchObject({ retriable: false, limitBytes: limit });

        const justUnder = Buffer.alloc(sizes.justUnder, 2);
        await producer.send({ payload: justUnder, properties: { id: 'big' } });
        const [message] = await inbox.waitFor(1, timeoutMs);
        expect(message?.payload.length).toBe(justUnder.length);
      },
    );

    // Chunking is the binary protocol's: a suite without a chunked publisher has no such test (not a skipped one).
    const { publishChunked } = options;
    if (publishChunked) {
      it('delivers a chunked message whole, with its properties', async () => {
        const topic = persistentTopic('ct-chunked');
        const inbox = new Inbox(ack);
        await subscribeDurable(topic, uniqueName('sub'), inbox);
        const bytes = options.chunkedPayloadBytes ?? 6 * 1024 * 1024;
        const payload = randomBytes(bytes);
        await publishChunked(topic, payload, { id: 'chunked-1' });
        const after = await createProducer(topic);
        await after.send({ payload: Buffer.from('after the chunked one') });

        const [whole, next] = await inbox.waitFor(2, timeoutMs);
        expect(whole?.payload.length).toBe(bytes);
        expect(whole?.payload.equals(payload)).toBe(true);
        expect(whole?.properties).toEqual({ id: 'chunked-1' });
        expect(next?.payload.toString()).toBe('after the chunked one');
        await sleep(quietMs);
        expect(inbox.messages).toHaveLength(2);
      });
    }

    contract('stops delivering once a consumer is closed, and refuses work once the transport is closed', async () => {
      const topic = persistentTopic('ct-close');
      const inbox = new Inbox(ack);
      const consumer = await subscribeDurable(topic, uniqueName('sub'), inbox);
      const producer = await createProducer(topic);
      await producer.send({ payload: Buffer.from('before close') });
      await inbox.waitFor(1, timeoutMs);

      await consumer.close();
      await producer.send({ payload: Buffer.from('after close') });
      await sleep(quietMs);
      expect(inbox.texts()).toEqual(['before close']);

      await cleanUp();
      await transport.close();
      expect(transport.status().connected).toBe(false);
      await expect(transport.createProducer(topic)).rejects.toBeInstanceOf(TransportError);
    });
  });
}
