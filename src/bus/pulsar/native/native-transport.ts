/**
 * The transport over the official `pulsar-client` (Pulsar's binary protocol through the C++ client), the
 * production option where its native binding loads. The package is an optional dependency whose install
 * script downloads a prebuilt binary; where that fails the module is absent (`npm run native:build` builds it
 * from source), so it is loaded only when this transport is selected, and its absence is reported as a
 * TransportUnavailableError.
 *
 * Its types may be absent too: the few parts used here are declared in pulsar-client-module.ts.
 *
 * Tuned for request/response traffic (docs/benchmarks.md): producer batching is off, so a publish goes out at
 * once instead of waiting up to the batching delay; consumers keep the client's default ack grouping (acks
 * are sent in groups every 100 ms without delaying the handler), and a message on a non-persistent topic is
 * not acknowledged at all: the broker stores nothing there to acknowledge (nor counts it as unacknowledged),
 * and each call would cost the binding a thread-safe callback. The client's statistics are off
 * (`statsIntervalInSeconds: 0`). `npm run native:build` patches the binding (scripts/native-patches/) so that
 * a send's promise needs no async handle of its own and the listener thread does not wait for each JS call;
 * this file works the same with the unpatched binding (a prebuilt one), only at a higher CPU cost.
 */
import { pino, type Logger } from 'pino';
import { deliver } from '../../deliver.js';
import { RecyclingNativeProducer } from './producer.js';
import { RecyclingNativeConsumer } from './consumer.js';
import { plainIncoming, wrappedIncoming } from './incoming.js';
import { StuckWatch } from './stuck-watch.js';
import { untilServiceUrlReachable } from '../service-url-reachable.js';
import { ConnectionStatus, StatusReporting, type SubscriberCheck } from '../../connection-status.js';
import {
  ConnectError,
  FrameTooLargeError,
  TransportClosedError,
} from '../../errors.js';
import type {
  Consumer,
  Producer,
  ProducerOptions,
  SubscribeOptions,
  SubscriptionType,
  Transport,
  TransportStatus,
} from '../../transport.js';
import { errorMessage, InvalidUseError } from '../../../errors/index.js';
import {
  isPlain,
  loadPulsarClient,
  type NativeClient,
  type NativeSubscriptionType,
  type PulsarClientModule,
} from './pulsar-client-module.js';

export interface NativeTransportOptions {
  /** e.g. `pulsar://pulsar:6650`. */
  serviceUrl: string;
  /** JWT for token authentication. */
  token?: string;
  /** CA bundle (PEM) that signed the broker's certificate, for `pulsar+ssl://`. Default: the system CAs. */
  tlsTrustCertsFile?: string;
  /**
   * The broker's `maxMessageSize` (Pulsar's default: 5 MiB). A larger payload is refused before it is sent,
   * with a FrameTooLargeError; the C++ client refuses one over the limit the broker announced anyway.
   */
  maxMessageBytes?: number;
  /** How long a publish may wait for the broker's receipt, reconnects included. Default 30000 (the client's). */
  sendTimeoutMs?: number;
  /**
   * Seconds for lookups, producer and consumer creation. Default 10 (the client's is 30): it also bounds how far
   * apart the C++ client's lookups grow while the broker is away (see DEFAULT_OPERATION_TIMEOUT_SECONDS).
   */
  operationTimeoutSeconds?: number;
  /** The broker listener to use (`advertisedListeners`), TrustGraph's `--pulsar-listener`. */
  listenerName?: string;
  /** The C++ client's log lines go here. Default: silent. */
  logger?: Logger;
  /** How long publishes wait after a lost connection is whole again (connection-status.ts). Default 3000 ms. */
  reconnectSettleMs?: number;
  /** After a reconnect, asks whether a non-persistent topic has a subscriber again before publishing to it. */
  subscribers?: SubscriberCheck;
}

/** Pulsar's default `maxMessageSize`. */
export const DEFAULT_MAX_MESSAGE_BYTES = 5 * 1024 * 1024;

/** The C++ client's log levels (DEBUG, INFO, WARN, ERROR) mapped to pino's. */
const LOG_METHODS = ['debug', 'debug', 'warn', 'error'] as const;

const SUBSCRIPTION_TYPES: Record<SubscriptionType, NativeSubscriptionType> = {
  Exclusive: 'Exclusive',
  Shared: 'Shared',
  Failover: 'Failover',
  Key_Shared: 'KeyShared',
};

/**
 * How often the producers' and consumers' connection state is sampled. pulsar-client has no connection events
 * (only `isConnected()`), so this transport samples and pushes each change to `onStatus` listeners; a drop and
 * reconnect both within one sample go unseen (docs/reliability.md, Broker loss).
 */
const STATUS_SAMPLE_MS = 250;
/**
 * The C++ client retries a failed lookup with a backoff of its own, 100 ms doubling, for as long as the operation
 * timeout allows, whatever `maxBackoffIntervalMs` says; only then does the producer's or consumer's reconnect
 * backoff (at most 2 s, below) start a new lookup. With the client's 30 s, lookups during an outage end up 6 to 13 s
 * apart, and the first one after the broker is back can come that late; with 10 s they are at most 3.7 s apart.
 * Creating a producer or consumer takes well under a second on a broker that answers.
 */
const DEFAULT_OPERATION_TIMEOUT_SECONDS = 10;
/**
 * A producer or consumer down this much longer than one creation attempt, while another has been connected for
 * STUCK_OTHERS_UP_MS, is replaced (stuck-watch.ts says why and how these were chosen).
 */
const STUCK_AFTER_ATTEMPT_MS = 4000;
const STUCK_OTHERS_UP_MS = 8000;
/**
 * Sends one producer hands the C++ client at once (its `maxPendingMessages`, the client's default made
 * explicit); more wait in the producer for a place (producer.ts). More would let a burst on one topic out
 * sooner only while the broker keeps up, and would leave more sends in the client to fail and send again
 * when a connection drops.
 */
export const MAX_PENDING_SENDS = 1000;
/** A creation attempt of our own may take this much longer than the client's operation timeout. */
const ATTEMPT_MARGIN_MS = 1000;
/** How long the first connection waits for the broker's port to open. */
const FIRST_REACH_TIMEOUT_MS = 30_000;
/** `status()` samples again only when the last sample is older than this. */
const STATUS_FRESH_MS = 20;

/** Errors from the C++ client that no retry can fix [inferred from its result names]. */
const PERMANENT = /AuthenticationError|AuthorizationError|TopicNotFound|InvalidTopicName|NotAllowed|IncompatibleSchema/;
/** The C++ client's results for a topic, namespace or tenant that does not exist (yet): a ConnectError's 404. */
const NOT_FOUND = /NotFound|not found/i;

export class NativeTransport extends StatusReporting implements Transport {
  readonly kind = 'native';
  private readonly client: NativeClient;
  private readonly logger: Logger;
  private readonly serviceUrl: string;
  private readonly maxMessageBytes: number;
  private readonly sendTimeoutMs: number;
  private readonly producers = new Set<RecyclingNativeProducer>();
  private readonly consumers = new Set<RecyclingNativeConsumer>();
  /** The consumer behind each subscription handed out, for the producers whose publishes need it (`replies`). */
  private readonly consumerOf = new WeakMap<Consumer, RecyclingNativeConsumer>();
  private readonly stuck: StuckWatch;
  protected readonly connection: ConnectionStatus;
  private readonly statusTimer: NodeJS.Timeout;
  private readonly operationTimeoutSeconds: number;
  /** Set once the broker's port has accepted a connection: from then on the client's own reconnects take over. */
  private reached: Promise<void> | undefined;
  private closed = false;
  /** When `sampleStatus` last ran (performance.now()). */
  private sampledAt = -Infinity;

  /** Loads the binding (TransportUnavailableError when absent) and creates the client. */
  static async create(options: NativeTransportOptions): Promise<NativeTransport> {
    return new NativeTransport(await loadPulsarClient(), options);
  }

  constructor(module: PulsarClientModule, options: NativeTransportOptions) {
    super();
    if (!/^pulsar(\+ssl)?:\/\//.test(options.serviceUrl)) {
      throw new InvalidUseError(`serviceUrl must be a pulsar:// or pulsar+ssl:// URL, got "${options.serviceUrl}"`);
    }
    this.serviceUrl = options.serviceUrl;
    this.connection = new ConnectionStatus(options.reconnectSettleMs, options.subscribers);
    this.operationTimeoutSeconds = options.operationTimeoutSeconds ?? DEFAULT_OPERATION_TIMEOUT_SECONDS;
    this.stuck = new StuckWatch({ stuckMs: this.attemptTimeoutMs() + STUCK_AFTER_ATTEMPT_MS, othersUpMs: STUCK_OTHERS_UP_MS });
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.sendTimeoutMs = options.sendTimeoutMs ?? 30_000;
    const logger = (this.logger = options.logger ?? pino({ level: 'silent' }));
    const clientLogger = logger.child({ component: 'pulsar-client' });
    this.client = new module.Client({
      serviceUrl: options.serviceUrl,
      ...(options.token ? { authentication: new module.AuthenticationToken({ token: options.token }) } : {}),
      ...(options.tlsTrustCertsFile ? { tlsTrustCertsFilePath: options.tlsTrustCertsFile } : {}),
      operationTimeoutSeconds: this.operationTimeoutSeconds,
      // The C++ client's reconnect backoff grows to 60 s by default: after a long outage a producer or consumer
      // could wait up to a minute after the broker is back. At most 2 s, as on the WebSocket transport.
      initialBackoffIntervalMs: 100,
      maxBackoffIntervalMs: 2000,
      ...(options.listenerName ? { listenerName: options.listenerName } : {}),
      // Without a handler the C++ client prints its own lines on stdout, between our JSON log lines.
      log: (level, file, line, message) => clientLogger[LOG_METHODS[level] ?? 'warn']({ file, line }, message),
      logLevel: logger.isLevelEnabled('debug') ? 0 : 2,
      // The client's own statistics (kept per message under a lock, printed at INFO every 10 minutes, which
      // the WARN level above never shows) are off.
      statsIntervalInSeconds: 0,
    });
    this.statusTimer = setInterval(() => this.sampleStatus(), STATUS_SAMPLE_MS);
    this.statusTimer.unref();
  }

  maxPayloadBytes(properties: Record<string, string> = {}): number {
    // Properties travel in the message metadata, which the broker counts too.
    return Math.max(0, this.maxMessageBytes - Buffer.byteLength(JSON.stringify(properties), 'utf8') - 1024);
  }

  async createProducer(topic: string, options: ProducerOptions = {}): Promise<Producer> {
    this.assertOpen();
    let producer: RecyclingNativeProducer;
    try {
      await this.untilReached();
      producer = await RecyclingNativeProducer.open({
        topic,
        // Batching off: with it a publish waits up to batchingMaxPublishDelayMs (10 ms) for company, which is
        // most of a request/response round trip. Chunking off: TrustGraph's consumers must not need it.
        // LZ4: every Pulsar client (TrustGraph's Python one, the broker's WebSocket service) decompresses on its
        // own, and fewer bytes keep a busy reader's connection writable; a non-persistent topic drops what a
        // connection with more than 64 KiB waiting in the broker cannot take (docs/reliability.md).
        create: () =>
          this.client.createProducer({
            topic,
            batchingEnabled: false,
            chunkingEnabled: false,
            compressionType: 'LZ4',
            sendTimeoutMs: this.sendTimeoutMs,
            maxPendingMessages: MAX_PENDING_SENDS,
          }),
        attemptTimeoutMs: this.attemptTimeoutMs(),
        connection: this.connection,
        alsoNeeds: this.neededBy(options),
        awaitSubscriber: options.awaitSubscriber ?? false,
        sendTimeoutMs: this.sendTimeoutMs,
        maxPendingSends: MAX_PENDING_SENDS,
        maxMessageBytes: this.maxMessageBytes,
        tooLarge: (t, size) => this.tooLarge(t, size),
        logger: this.logger,
      });
    } catch (err) {
      throw this.connectError(`cannot create producer for ${topic}`, err);
    }
    this.producers.add(producer);
    return {
      topic,
      send: (message) => producer.send(message),
      close: async () => {
        this.producers.delete(producer);
        await producer.close();
      },
    };
  }

  async subscribe(options: SubscribeOptions): Promise<Consumer> {
    this.assertOpen();
    const { topic, subscription, handler } = options;
    const nonPersistent = topic.startsWith('non-persistent://');
    let closed = false;
    let consumer: RecyclingNativeConsumer;
    try {
      await this.untilReached();
      consumer = await RecyclingNativeConsumer.open({
        topic,
        subscription,
        attemptTimeoutMs: this.attemptTimeoutMs(),
        logger: this.logger,
        subscribe: () =>
          this.client.subscribe({
            topic,
            subscription,
            subscriptionType: SUBSCRIPTION_TYPES[options.subscriptionType],
            receiverQueueSize: options.receiverQueueSize ?? 1000,
            nAckRedeliverTimeoutMs: options.negativeAckRedeliveryDelayMs ?? 1000,
            // A non-persistent topic needs no acknowledgement, so nothing needs the native message once it is read:
            // a plain copy spares the event loop a finalizer per message after every full collection.
            plainMessages: nonPersistent,
            listener: (raw, native) => {
              if (closed) return;
              const message = isPlain(raw) ? plainIncoming(raw, topic) : wrappedIncoming(raw, native, nonPersistent, { topic, subscription }, this.logger);
              deliver(handler, message, this.logger, { topic, subscription });
            },
          }),
      });
    } catch (err) {
      throw this.connectError(`cannot subscribe to ${topic} as ${subscription}`, err);
    }
    this.consumers.add(consumer);
    const handle: Consumer = {
      topic,
      subscription,
      close: async (closeOptions?: { unsubscribe?: boolean }): Promise<void> => {
        if (closed) return;
        closed = true;
        this.consumers.delete(consumer);
        await consumer.close(closeOptions);
      },
    };
    this.consumerOf.set(handle, consumer);
    return handle;
  }

  /** The links a producer's publishes need besides its own: the reply subscription of a call. */
  private neededBy(options: ProducerOptions): RecyclingNativeConsumer['link'][] {
    const replies = options.replies && this.consumerOf.get(options.replies);
    return replies ? [replies.link] : [];
  }

  override status(): TransportStatus {
    // Callers read it per request; a sample costs an N-API call per producer and consumer.
    if (performance.now() - this.sampledAt >= STATUS_FRESH_MS) this.sampleStatus();
    return this.connection.get();
  }

  /**
   * The binding has no connection events, so `isConnected()` of every producer and consumer is sampled; a
   * sample that finds one down after all were up is a lost connection (a new epoch). A producer found cut off
   * with sends in flight is replaced by the same sample (producer.ts).
   */
  private sampleStatus(): void {
    this.sampledAt = performance.now();
    if (this.closed) {
      this.connection.set(false, 'native transport closed');
      return;
    }
    const consumerStates = [...this.consumers].map((c) => [c, c.isConnected()] as const);
    const states = [...[...this.producers].map((p) => [p, p.sampleConnection()] as const), ...consumerStates];
    for (const handler of this.stuck.sample(states, this.sampledAt)) {
      this.logger.warn({ handler: handler.name }, `The ${handler.name} has not reconnected though the broker answers the others; creating it anew`);
      handler.replace();
    }
    const down = states.filter(([, up]) => !up).map(([handler]) => handler.name);
    if (down.length === 0) return this.connection.set(true);
    const detail = `${down.length} producers/consumers reconnecting: ${down.slice(0, 3).join('; ')}${down.length > 3 ? '; …' : ''}`;
    const receiving = consumerStates.every(([, up]) => up);
    if (this.connection.get().connected) this.connection.lost(detail, receiving);
    else this.connection.set(false, detail, receiving);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.statusTimer);
    this.sampleStatus();
    const closing = [...this.producers, ...this.consumers].map((c) => c.close().catch(() => null));
    this.producers.clear();
    this.consumers.clear();
    await Promise.all(closing);
    await this.client.close();
  }

  private tooLarge(topic: string, payloadBytes: number): FrameTooLargeError {
    return new FrameTooLargeError(
      topic,
      payloadBytes,
      this.maxMessageBytes,
      payloadBytes,
      `message for ${topic} is ${payloadBytes} bytes, over the broker's ${this.maxMessageBytes}-byte ` +
        'maxMessageSize; it was not sent. Keep payloads under it, or raise maxMessageSize on the broker',
    );
  }

  /** How long one attempt of our own to create a producer or consumer again may take (create-until-up.ts). */
  private attemptTimeoutMs(): number {
    return this.operationTimeoutSeconds * 1000 + ATTEMPT_MARGIN_MS;
  }

  /** Before the first connection only: wait for the broker's port to open (service-url-reachable.ts says why). */
  private untilReached(): Promise<void> {
    this.reached ??= untilServiceUrlReachable(this.serviceUrl, FIRST_REACH_TIMEOUT_MS).catch((error: unknown) => {
      this.reached = undefined;
      throw error;
    });
    return this.reached;
  }

  private assertOpen(): void {
    if (this.closed) throw new TransportClosedError('native transport');
  }

  /** The binding's failure (only its text says what it was) as a ConnectError: retriable or not, not found or not. */
  private connectError(what: string, err: unknown): ConnectError {
    const text = errorMessage(err);
    return new ConnectError(`${what} at ${this.serviceUrl}: ${text}`, this.serviceUrl, NOT_FOUND.test(text) ? 404 : undefined, {
      cause: err,
      retriable: !PERMANENT.test(text),
    });
  }
}
