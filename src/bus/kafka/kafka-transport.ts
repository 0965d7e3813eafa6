/**
 * The transport over Apache Kafka (`kafkajs`), for TrustGraph deployments run with `--pubsub-backend kafka`.
 * Topics, consumer groups and retention are TrustGraph's own (topology.ts); each subscription is a
 * consumer of its own (subscription.ts); one producer serves every topic, and what is published in one turn of
 * the event loop goes in one request (produce-batcher.ts).
 *
 * Status: the transport is connected while its producer is and every consumer is in its group. A consumer
 * whose fetches fail restarts, rejoins, and says so; a probe asks the cluster for its metadata every second,
 * so a broker that went away is noticed even when nothing is being sent or read.
 *
 * A topic is created on first use, as TrustGraph's `ensure_topic` makes it (one partition, its retention),
 * so that a topic tg-agent is the first to touch does not take the broker's defaults.
 *
 * Why kafkajs: it is JavaScript through and through, so it builds and runs wherever Node does, with no second
 * native library to compile beside `pulsar-client` (`@confluentinc/kafka-javascript` builds librdkafka from the
 * source in its package, but fetches zlib, OpenSSL, zstd and curl from their own sites while it does); it has
 * consumer groups, headers, manual offset commits and an admin client, and it works against Kafka 4's protocol.
 * Its publishes are batched (produce-batcher.ts; docs/backends.md, "Why kafkajs"). It has been in maintenance
 * since 2024: the transport uses only its long-stable core, behind the same interface as every other transport.
 */
import { connect, isIP } from 'node:net';
import tls from 'node:tls';
import kafkajs, { Kafka, logLevel, Partitioners, type Admin, type ISocketFactory, type KafkaConfig } from 'kafkajs';
import { pino, type Logger } from 'pino';
import { errorMessage } from '../../errors/index.js';
import { exponentialBackoff, retry } from '../../retry/index.js';
import { checkedProducer } from '../checked-producer.js';
import { ConnectionStatus, StatusReporting } from '../connection-status.js';
import { ConnectError, FrameTooLargeError, NotConnectedError, TransportClosedError, TransportError, UnacknowledgedSendError } from '../errors.js';
import { kafkaGroupFor, kafkaTopicFor, type KafkaGroup, type KafkaTopic } from './topology.js';
import { KafkaSubscription, type PartitionOffset } from './subscription.js';
import { ProduceBatcher } from './produce-batcher.js';
import { RenewableProducer } from './renewable-producer.js';
import type { Consumer, OutgoingMessage, Producer, ProducerOptions, SubscribeOptions, Transport } from '../transport.js';

/**
 * kafkajs's error class, whose `retriable` says whether a request may succeed if tried again. A named import of
 * it fails at run time: Node does not find every export of kafkajs's CommonJS module.
 */
const { KafkaJSError } = kafkajs;

export interface KafkaTransportOptions {
  brokers: string[];
  /** TLS and SASL, as `--kafka-security-protocol` and `--kafka-sasl-*` give them (topology.ts). */
  security?: Pick<KafkaConfig, 'ssl' | 'sasl'>;
  logger?: Logger;
  clientId?: string;
  /** The broker's `message.max.bytes`, less room for the batch and its headers. Default 1 000 000. */
  maxMessageBytes?: number;
  /** How long a publish may wait for a connection that is not whole. Default 30000 ms. */
  sendTimeoutMs?: number;
  /** How long publishes wait after a lost connection is whole again. Default 3000 ms. */
  reconnectSettleMs?: number;
  /** How often the probe asks the cluster for its metadata. Default 1000 ms. */
  probeIntervalMs?: number;
}

/** Kafka's default `message.max.bytes` is 1 048 588 bytes a record batch; this leaves room for headers. */
export const DEFAULT_KAFKA_MAX_MESSAGE_BYTES = 1_000_000;
const PRODUCER = 'producer';
const PROBE = 'probe';

export class KafkaTransport extends StatusReporting implements Transport {
  readonly kind = 'kafka';
  private readonly logger: Logger;
  /** The client of the producer and the admin requests; each subscription makes its own (subscription.ts). */
  private readonly kafka: Kafka;
  private readonly clientConfig: KafkaConfig;
  private readonly producer: RenewableProducer;
  /** Every publish goes through it: what is published in one turn of the event loop leaves in one request. */
  private readonly outbox: ProduceBatcher;
  private readonly admin: Admin;
  readonly maxMessageBytes: number;
  private readonly sendTimeoutMs: number;
  protected readonly connection: ConnectionStatus;
  /** What is not connected now, and why; empty: connected. */
  private readonly down = new Map<string, string>([[PRODUCER, 'connecting to Kafka']]);
  private readonly subscriptions = new Set<KafkaSubscription>();
  /** Topics known to exist (created, or found), by Kafka name. */
  private readonly topics = new Map<string, Promise<void>>();
  private readonly probe: NodeJS.Timeout;
  private readonly connecting: Promise<void>;
  private established = false;
  private closed = false;
  /** A probe is waiting for its answer (kafkajs retries a request itself; probes must not pile up). */
  private probing = false;

  constructor(private readonly options: KafkaTransportOptions) {
    super();
    this.logger = options.logger ?? pino({ level: 'silent' });
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_KAFKA_MAX_MESSAGE_BYTES;
    this.sendTimeoutMs = options.sendTimeoutMs ?? 30_000;
    this.connection = new ConnectionStatus(options.reconnectSettleMs);
    this.connection.set(false, 'connecting to Kafka');
    this.clientConfig = {
      clientId: options.clientId ?? 'tg-agent',
      brokers: options.brokers,
      ...options.security,
      connectionTimeout: 3000,
      requestTimeout: 10_000,
      retry: { initialRetryTime: 100, maxRetryTime: 2000, retries: 5 },
      logLevel: logLevel.WARN,
      logCreator: () => (entry) => this.logger.debug({ kafkajs: entry.log, level: entry.level }, `kafkajs: ${entry.log.message}`),
      socketFactory: noDelaySockets,
    };
    this.kafka = new Kafka(this.clientConfig);
    // Idempotent, with retries that outlast a leader election (a new leader after about 9 s): a batch written as
    // its leader died is sent again to the new leader, which drops the copy it already has. kafkajs sends one
    // produce request at a time to each broker when idempotent, and the batcher one batch at a time.
    this.producer = new RenewableProducer(
      () =>
        this.kafka.producer({
          createPartitioner: Partitioners.DefaultPartitioner,
          allowAutoTopicCreation: false,
          idempotent: true,
          retry: { initialRetryTime: 100, maxRetryTime: 2000, retries: 15 },
        }),
      this.sendTimeoutMs,
      this.logger,
    );
    this.outbox = new ProduceBatcher(this.producer, { maxBatchBytes: this.maxMessageBytes, timeoutMs: this.sendTimeoutMs });
    this.admin = this.kafka.admin();
    this.connecting = this.connect();
    this.probe = setInterval(() => void this.checkCluster(), options.probeIntervalMs ?? 1000);
    this.probe.unref();
  }

  maxPayloadBytes(): number {
    return this.maxMessageBytes;
  }

  /** `awaitSubscriber` does not apply: a topic keeps its messages for its retention, read or not. */
  async createProducer(topic: string, _options?: ProducerOptions): Promise<Producer> {
    this.assertOpen();
    const where = kafkaTopicFor(topic);
    return checkedProducer(topic, this, async (message) => {
      if (!(await this.ready(topic))) {
        throw new NotConnectedError(`producer for ${topic} is not connected after ${this.sendTimeoutMs} ms (${this.connection.get().detail ?? 'reconnecting'})`);
      }
      await this.ensureTopic(where);
      await this.publish(where, message, topic);
    });
  }

  async subscribe(options: SubscribeOptions): Promise<Consumer> {
    this.assertOpen();
    const where = kafkaTopicFor(options.topic);
    const subscription = new KafkaSubscription(this.clientConfig, options, where, kafkaGroupFor(where, options.subscription), this.link, this.logger);
    this.subscriptions.add(subscription);
    try {
      await this.connecting;
      await this.ensureTopic(where);
      await subscription.start(this.sendTimeoutMs, await this.startOfNewGroup(where, subscription.group));
    } catch (err) {
      this.subscriptions.delete(subscription);
      this.link.up(subscription.key);
      await subscription.close((groupId) => this.deleteGroup(groupId), false);
      throw new ConnectError(`cannot subscribe to ${options.topic} as ${options.subscription}: ${errorMessage(err)}`, this.options.brokers.join(','), undefined, { cause: err });
    }
    return {
      topic: options.topic,
      subscription: options.subscription,
      close: async (closeOptions?: { unsubscribe?: boolean }) => {
        if (!this.subscriptions.delete(subscription)) return;
        this.link.up(subscription.key);
        await subscription.close((groupId) => this.deleteGroup(groupId), closeOptions?.unsubscribe === true);
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.probe);
    const subscriptions = [...this.subscriptions];
    this.subscriptions.clear();
    this.connection.set(false, 'kafka transport closed');
    await Promise.allSettled([this.outbox.drain(), ...subscriptions.map((s) => s.close((groupId) => this.deleteGroup(groupId), false))]);
    await Promise.allSettled([this.producer.disconnect(), this.admin.disconnect()]);
  }

  /** How the parts of the transport report their links. */
  private readonly link = {
    up: (key: string): void => {
      if (!this.down.delete(key)) return;
      this.update();
    },
    down: (key: string, detail: string): void => {
      const was = this.down.size === 0;
      this.down.set(key, detail);
      if (was) this.logger.warn(detail);
      this.update();
    },
  };

  private update(): void {
    if (this.closed) return;
    if (this.down.size === 0) {
      this.established = true;
      this.connection.set(true);
      return;
    }
    const detail = [...this.down.values()][0]!;
    if (this.established && this.connection.get().connected) this.connection.lost(detail);
    else this.connection.set(false, detail);
  }

  /** The producer and the admin client, tried again every second until the broker answers. */
  private async connect(): Promise<void> {
    for (;;) {
      try {
        await Promise.all([this.producer.connect(), this.admin.connect()]);
        this.link.up(PRODUCER);
        return;
      } catch (err) {
        if (this.closed) throw new TransportClosedError('kafka transport');
        this.link.down(PRODUCER, `cannot connect to Kafka at ${this.options.brokers.join(',')}: ${errorMessage(err)}`);
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  }

  /** The probe: the cluster's metadata, within 3 s. */
  private async checkCluster(): Promise<void> {
    if (this.closed || this.probing || this.down.has(PRODUCER)) return;
    this.probing = true;
    const asked = this.admin.describeCluster().then(() => true, () => false);
    void asked.finally(() => (this.probing = false));
    const answered = await Promise.race([asked, new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 3000).unref())]);
    if (this.closed) return;
    if (answered) this.link.up(PROBE);
    else this.link.down(PROBE, `Kafka at ${this.options.brokers.join(',')} does not answer`);
  }

  /** True once a publish may go out (connected, and settled after a reconnect), within the send timeout. */
  private async ready(topic: string): Promise<boolean> {
    if (!this.established) {
      const first = this.connecting.then(() => true, () => false);
      const late = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), this.sendTimeoutMs).unref());
      if (!(await Promise.race([first, late]))) return false;
    }
    return this.connection.settled(this.sendTimeoutMs, topic);
  }

  /** Creates the topic as TrustGraph does, unless it exists; once per topic and transport. */
  private ensureTopic(where: KafkaTopic): Promise<void> {
    let known = this.topics.get(where.name);
    if (!known) {
      // The cluster's own replication factor (`default.replication.factor`), where TrustGraph asks for 1: a topic with
      // one replica stops when its broker does, so a cluster could not lose a node without stopping its flows.
      const topics = [{ topic: where.name, numPartitions: 1, configEntries: [{ name: 'retention.ms', value: String(where.retentionMs) }] }];
      known = this.adminCall(() => this.admin.createTopics({ waitForLeaders: true, topics }))
        .then(() => undefined)
        .catch((err: unknown) => {
          this.topics.delete(where.name);
          throw new TransportError(`cannot create the Kafka topic ${where.name}: ${errorMessage(err)}`, { retriable: true, cause: err });
        });
      this.topics.set(where.name, known);
    }
    return known;
  }

  /**
   * Where a group that has never committed starts: where the topic ends now (the subscription commits it as
   * soon as it joins). As a Pulsar subscription's cursor, it then keeps what is published from the moment
   * it was made, even while no member reads. (Left to `latest`, a group would read only what comes after its
   * first fetch, and lose what was published between subscribing and that fetch.)
   */
  private async startOfNewGroup(where: KafkaTopic, group: KafkaGroup): Promise<PartitionOffset[]> {
    if (group.fromBeginning) return [];
    const ends = await this.adminCall(() => this.admin.fetchTopicOffsets(where.name));
    // A private group is new by its name; a shared one may have committed already.
    const [committed] = group.private ? [] : await this.adminCall(() => this.admin.fetchOffsets({ groupId: group.groupId, topics: [where.name] }));
    const unset = committed ? new Set(committed.partitions.filter((p) => p.offset === '-1').map((p) => p.partition)) : undefined;
    return ends.filter((e) => unset === undefined || unset.has(e.partition)).map((e) => ({ partition: e.partition, offset: e.high }));
  }

  /**
   * An admin request, tried again while Kafka says the failure is passing (a broker just started is still
   * loading its groups: GROUP_LOAD_IN_PROGRESS), within the send timeout. kafkajs retries its producer and
   * consumer requests itself, but not these.
   */
  private adminCall<T>(request: () => Promise<T>): Promise<T> {
    return retry(request, {
      backoff: exponentialBackoff({ initialMs: 100, maxMs: 2000 }),
      maxElapsedMs: this.sendTimeoutMs,
      retryIf: (error) => error instanceof KafkaJSError && error.retriable && !this.closed,
    });
  }

  private async publish(where: KafkaTopic, message: OutgoingMessage, topic: string): Promise<void> {
    const headers = message.properties && Object.keys(message.properties).length > 0 ? message.properties : undefined;
    try {
      await this.outbox.send(where.name, { value: message.payload, ...(headers ? { headers } : {}), ...(message.key ? { key: message.key } : {}) });
    } catch (err) {
      if (err instanceof UnacknowledgedSendError) throw new UnacknowledgedSendError(`send on ${topic} failed: ${err.message}`, { cause: err });
      throw new TransportError(`send on ${topic} failed: Kafka did not take it (${errorMessage(err)})`, { retriable: true, cause: err });
    }
  }

  private async deleteGroup(groupId: string): Promise<void> {
    await this.admin.deleteGroups([groupId]).catch((err: unknown) => this.logger.debug({ err, groupId }, 'Kafka consumer group not deleted'));
  }

  tooLarge(topic: string, size: number): FrameTooLargeError {
    return new FrameTooLargeError(
      topic,
      size,
      this.maxMessageBytes,
      size,
      `message for ${topic} is ${size} bytes, over the ${this.maxMessageBytes}-byte limit for Kafka (raise the broker's message.max.bytes and --kafka-max-message-bytes together); it was not sent`,
    );
  }

  assertOpen(): void {
    if (this.closed) throw new TransportClosedError('kafka transport');
  }
}

/**
 * kafkajs's own sockets, with Nagle's algorithm off: kafkajs leaves it on, so a small request written while
 * an earlier one was unacknowledged could wait for the peer's delayed ACK (tens of milliseconds a hop).
 */
const noDelaySockets: ISocketFactory = ({ host, port, ssl, onConnect }) => {
  const socket = ssl ? tls.connect({ host, port, ...(isIP(host) ? {} : { servername: host }), ...ssl }, onConnect) : connect({ host, port }, onConnect);
  socket.setNoDelay(true);
  socket.setKeepAlive(true, 60_000);
  return socket;
};
