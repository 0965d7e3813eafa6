/**
 * The transport over the official `pulsar-client` (Pulsar's binary protocol through the C++ client), the
 * production option where its native binding installs. The package is an optional dependency whose install
 * script downloads a prebuilt binary; where that fails the module is absent, so it is loaded only when this
 * transport is selected, and its absence is reported as a TransportUnavailableError.
 *
 * Its types are not available either, so the few parts used here are declared below from the package's
 * `index.d.ts` (1.18.0). This file is not exercised on machines without the binding.
 */
import { pino, type Logger } from 'pino';
import { ConnectError, TransportClosedError, TransportError, TransportUnavailableError } from './errors.js';
import type {
  Consumer,
  IncomingMessage,
  OutgoingMessage,
  Producer,
  SubscribeOptions,
  SubscriptionType,
  Transport,
  TransportStatus,
} from './transport.js';

// --- The parts of pulsar-client's API used here -----------------------------------------------------------

type NativeSubscriptionType = 'Exclusive' | 'Shared' | 'Failover' | 'KeyShared';

interface NativeMessage {
  getData(): Buffer;
  getProperties(): Record<string, string>;
  getMessageId(): { toString(): string };
  getRedeliveryCount(): number;
  getTopicName(): string;
}

interface NativeConsumer {
  acknowledge(message: NativeMessage): Promise<null>;
  negativeAcknowledge(message: NativeMessage): void;
  unsubscribe(): Promise<null>;
  close(): Promise<null>;
  isConnected(): boolean;
}

interface NativeProducer {
  send(message: { data: Buffer; properties?: Record<string, string> }): Promise<unknown>;
  close(): Promise<null>;
  isConnected(): boolean;
}

interface NativeClient {
  createProducer(config: { topic: string }): Promise<NativeProducer>;
  subscribe(config: {
    topic: string;
    subscription: string;
    subscriptionType: NativeSubscriptionType;
    receiverQueueSize?: number;
    nAckRedeliverTimeoutMs?: number;
    listener: (message: NativeMessage, consumer: NativeConsumer) => void;
  }): Promise<NativeConsumer>;
  close(): Promise<null>;
}

/** The module's exports that are used. */
export interface PulsarClientModule {
  Client: new (config: { serviceUrl: string; authentication?: unknown }) => NativeClient;
  AuthenticationToken: new (params: { token: string }) => unknown;
}

// ----------------------------------------------------------------------------------------------------------

export const NATIVE_UNAVAILABLE_MESSAGE =
  'the native pulsar-client binding is not installed here (its install script downloads a binary); ' +
  'use transport=websocket or install pulsar-client where its binary is available';

/** Loads `pulsar-client`, or fails with TransportUnavailableError. */
export async function loadPulsarClient(): Promise<PulsarClientModule> {
  const specifier = 'pulsar-client';
  try {
    const loaded = (await import(/* @vite-ignore */ specifier)) as { default?: PulsarClientModule } & PulsarClientModule;
    const module = loaded.default ?? loaded;
    if (typeof module.Client !== 'function') throw new Error('pulsar-client has no Client export');
    return module;
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new TransportUnavailableError(`${NATIVE_UNAVAILABLE_MESSAGE} (${detail})`, { cause: err });
  }
}

export interface NativeTransportOptions {
  /** e.g. `pulsar://pulsar:6650`. */
  serviceUrl: string;
  /** JWT for token authentication. */
  token?: string;
  /** Default: silent. */
  logger?: Logger;
  /** The broker's `maxMessageSize`; larger payloads are refused by the client. Default 5 MiB (the broker's default). */
  maxMessageBytes?: number;
}

/** Pulsar's default `maxMessageSize`. */
const DEFAULT_MAX_MESSAGE_BYTES = 5 * 1024 * 1024;

const SUBSCRIPTION_TYPES: Record<SubscriptionType, NativeSubscriptionType> = {
  Exclusive: 'Exclusive',
  Shared: 'Shared',
  Failover: 'Failover',
  Key_Shared: 'KeyShared',
};

/** Errors from the C++ client that no retry can fix [inferred from its result names]. */
const PERMANENT = /AuthenticationError|AuthorizationError|TopicNotFound|InvalidTopicName|NotAllowed|IncompatibleSchema/;

export class NativeTransport implements Transport {
  readonly kind = 'native';
  private readonly client: NativeClient;
  private readonly logger: Logger;
  private readonly serviceUrl: string;
  private readonly maxMessageBytes: number;
  private readonly producers = new Set<NativeProducer>();
  private readonly consumers = new Set<NativeConsumer>();
  private closed = false;

  /** Loads the binding (TransportUnavailableError when absent) and creates the client. */
  static async create(options: NativeTransportOptions): Promise<NativeTransport> {
    return new NativeTransport(await loadPulsarClient(), options);
  }

  constructor(module: PulsarClientModule, options: NativeTransportOptions) {
    if (!/^pulsar(\+ssl)?:\/\//.test(options.serviceUrl)) {
      throw new TypeError(`serviceUrl must be a pulsar:// or pulsar+ssl:// URL, got "${options.serviceUrl}"`);
    }
    this.serviceUrl = options.serviceUrl;
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.logger = options.logger ?? pino({ level: 'silent' });
    this.client = new module.Client({
      serviceUrl: options.serviceUrl,
      ...(options.token ? { authentication: new module.AuthenticationToken({ token: options.token }) } : {}),
    });
  }

  maxPayloadBytes(properties: Record<string, string> = {}): number {
    // Properties travel in the message metadata, which the broker counts too.
    return Math.max(0, this.maxMessageBytes - Buffer.byteLength(JSON.stringify(properties), 'utf8') - 1024);
  }

  async createProducer(topic: string): Promise<Producer> {
    this.assertOpen();
    let native: NativeProducer;
    try {
      native = await this.client.createProducer({ topic });
    } catch (err) {
      throw this.connectError(`cannot create producer for ${topic}`, err);
    }
    this.producers.add(native);
    let closed = false;
    return {
      topic,
      send: async (message: OutgoingMessage): Promise<void> => {
        if (closed) throw new TransportClosedError(`producer for ${topic}`);
        try {
          await native.send({ data: message.payload, properties: message.properties ?? {} });
        } catch (err) {
          const text = errorText(err);
          // MessageTooBig: over the broker's maxMessageSize; sending it again cannot help.
          throw new TransportError(`send on ${topic} failed: ${text}`, { retriable: !/TooBig/i.test(text), cause: err });
        }
      },
      close: async (): Promise<void> => {
        if (closed) return;
        closed = true;
        this.producers.delete(native);
        await native.close();
      },
    };
  }

  async subscribe(options: SubscribeOptions): Promise<Consumer> {
    this.assertOpen();
    const { topic, subscription, handler } = options;
    let closed = false;
    let native: NativeConsumer;
    try {
      native = await this.client.subscribe({
        topic,
        subscription,
        subscriptionType: SUBSCRIPTION_TYPES[options.subscriptionType],
        receiverQueueSize: options.receiverQueueSize ?? 1000,
        nAckRedeliverTimeoutMs: options.negativeAckRedeliveryDelayMs ?? 1000,
        listener: (raw, consumer) => {
          if (closed) return;
          let settled = false;
          const message: IncomingMessage = {
            messageId: raw.getMessageId().toString(),
            topic,
            payload: raw.getData(),
            properties: raw.getProperties(),
            redeliveryCount: raw.getRedeliveryCount(),
            ack: async () => {
              if (settled) return;
              settled = true;
              await consumer.acknowledge(raw);
            },
            nack: async () => {
              if (settled) return;
              settled = true;
              consumer.negativeAcknowledge(raw);
            },
          };
          void (async () => {
            try {
              await handler(message);
            } catch (err) {
              this.logger.warn({ err, topic, subscription, messageId: message.messageId }, 'handler failed: nack');
              await message.nack();
            }
          })();
        },
      });
    } catch (err) {
      throw this.connectError(`cannot subscribe to ${topic} as ${subscription}`, err);
    }
    this.consumers.add(native);
    return {
      topic,
      subscription,
      close: async (closeOptions?: { unsubscribe?: boolean }): Promise<void> => {
        if (closed) return;
        closed = true;
        this.consumers.delete(native);
        if (closeOptions?.unsubscribe) {
          await native.unsubscribe().catch((err: unknown) => this.logger.debug({ err, topic, subscription }, 'unsubscribe failed'));
        }
        await native.close().catch((err: unknown) => this.logger.debug({ err, topic, subscription }, 'close failed'));
      },
    };
  }

  status(): TransportStatus {
    if (this.closed) return { connected: false, detail: 'native transport closed' };
    const down = [...this.producers, ...this.consumers].filter((c) => !c.isConnected()).length;
    return down === 0 ? { connected: true } : { connected: false, detail: `${down} producers/consumers reconnecting` };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const closing = [...this.producers, ...this.consumers].map((c) => c.close().catch(() => null));
    this.producers.clear();
    this.consumers.clear();
    await Promise.all(closing);
    await this.client.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new TransportClosedError('native transport');
  }

  private connectError(what: string, err: unknown): ConnectError {
    const text = errorText(err);
    return new ConnectError(`${what} at ${this.serviceUrl}: ${text}`, this.serviceUrl, undefined, {
      cause: err,
      retriable: !PERMANENT.test(text),
    });
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
