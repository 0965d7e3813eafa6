/**
 * The optional `pulsar-client` package as the native transport sees it: the few parts of its API used (declared
 * here from the package's `index.d.ts`, 1.18.0, since the package and its types may be absent), and loading it.
 */
import { TransportUnavailableError } from '../../errors.js';
import { errorMessage } from '../../../errors/index.js';

export type NativeSubscriptionType = 'Exclusive' | 'Shared' | 'Failover' | 'KeyShared';

export interface NativeMessage {
  getData(): Buffer;
  /** An array-like object with the properties as named keys, not a plain object. */
  getProperties(): Record<string, unknown>;
  getMessageId(): { toString(): string };
  getRedeliveryCount(): number;
  getTopicName(): string;
}

/**
 * What the listener gets from our patched build for a consumer subscribed with `plainMessages: true`
 * (scripts/native-patches/): the message copied into a plain object, the native message already freed. A
 * binding built without the patch ignores the option and passes a NativeMessage.
 */
export interface PlainNativeMessage {
  data: Buffer;
  properties: Record<string, string>;
  redeliveryCount: number;
  topicName: string;
  messageId: string;
}

export function isPlain(message: NativeMessage | PlainNativeMessage): message is PlainNativeMessage {
  return (message as Partial<NativeMessage>).getData === undefined;
}

export interface NativeConsumer {
  acknowledge(message: NativeMessage): Promise<null>;
  negativeAcknowledge(message: NativeMessage): void;
  unsubscribe(): Promise<null>;
  close(): Promise<null>;
  isConnected(): boolean;
}

export interface NativeProducer {
  /** `discardMessageId`: our patched build resolves with undefined instead of a MessageId (others ignore it). */
  send(message: { data: Buffer; properties?: Record<string, string>; partitionKey?: string; discardMessageId?: boolean }): Promise<unknown>;
  close(): Promise<null>;
  isConnected(): boolean;
}

export interface NativeProducerConfig {
  topic: string;
  batchingEnabled?: boolean;
  sendTimeoutMs?: number;
  /** Sends without a receipt at most; the C++ client fails one beyond it (`ProducerQueueIsFull`). Default 1000. */
  maxPendingMessages?: number;
  chunkingEnabled?: boolean;
  compressionType?: 'None' | 'Zlib' | 'LZ4' | 'ZSTD' | 'SNAPPY';
}

export type NativeLogLevel = 0 | 1 | 2 | 3;

export interface NativeClientConfig {
  serviceUrl: string;
  authentication?: unknown;
  operationTimeoutSeconds?: number;
  connectionTimeoutMs?: number;
  /** Reconnect backoff (the binding patch of `npm run native:build`; a binding without it ignores them). */
  initialBackoffIntervalMs?: number;
  maxBackoffIntervalMs?: number;
  tlsTrustCertsFilePath?: string;
  tlsValidateHostname?: boolean;
  log?: (level: NativeLogLevel, file: string, line: number, message: string) => void;
  logLevel?: NativeLogLevel;
  statsIntervalInSeconds?: number;
}

export interface NativeClient {
  createProducer(config: NativeProducerConfig): Promise<NativeProducer>;
  subscribe(config: {
    topic: string;
    subscription: string;
    subscriptionType: NativeSubscriptionType;
    receiverQueueSize?: number;
    nAckRedeliverTimeoutMs?: number;
    /** Our patched build: hand the listener PlainNativeMessages (others ignore it). */
    plainMessages?: boolean;
    listener: (message: NativeMessage | PlainNativeMessage, consumer: NativeConsumer) => void;
  }): Promise<NativeConsumer>;
  close(): Promise<null>;
}

/** The module's exports that are used. */
export interface PulsarClientModule {
  Client: new (config: NativeClientConfig) => NativeClient;
  AuthenticationToken: new (params: { token: string }) => unknown;
}

export const NATIVE_UNAVAILABLE_MESSAGE =
  'the native pulsar-client binding does not load here (its install script downloads a prebuilt binary; ' +
  '`npm run native:build` builds it from source); use --transport websocket or auto';

/** Loads `pulsar-client`, or fails with TransportUnavailableError. */
export async function loadPulsarClient(): Promise<PulsarClientModule> {
  const specifier = 'pulsar-client';
  try {
    const loaded = (await import(/* @vite-ignore */ specifier)) as { default?: PulsarClientModule } & PulsarClientModule;
    const module = loaded.default ?? loaded;
    if (typeof module.Client !== 'function') throw new TransportUnavailableError('pulsar-client has no Client export');
    return module;
  } catch (err) {
    const detail = errorMessage(err);
    throw new TransportUnavailableError(`${NATIVE_UNAVAILABLE_MESSAGE} (${detail})`, { cause: err });
  }
}
