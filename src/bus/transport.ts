/**
 * The one interface every message transport implements (design decision 12 (docs/design.md)): Pulsar's WebSocket API,
 * the native `pulsar-client`, and an in-process bus for unit tests.
 *
 * Topics here are always full Pulsar topic names (`persistent://tenant/ns/topic` or
 * `non-persistent://...`); TrustGraph queue ids are mapped by `topics.ts` before they reach a transport.
 * Payloads are raw bytes: the wire codecs (src/wire) turn them into typed messages.
 */

/** Message properties: a string map. TrustGraph uses only `id`. */
export type Properties = Record<string, string>;

export type SubscriptionType = 'Exclusive' | 'Shared' | 'Failover' | 'Key_Shared';

export interface OutgoingMessage {
  payload: Buffer;
  properties?: Properties;
  /** The message key: a Key_Shared subscription hands every message of one key to the same consumer. */
  key?: string;
}

export interface IncomingMessage {
  /** Transport-specific message id, opaque to callers. */
  readonly messageId: string;
  readonly topic: string;
  readonly payload: Buffer;
  readonly properties: Properties;
  readonly redeliveryCount: number;
  ack(): Promise<void>;
  nack(): Promise<void>;
}

export interface Producer {
  readonly topic: string;
  /** Resolves once the broker has acknowledged the publish; rejects with a TransportError otherwise. */
  send(message: OutgoingMessage): Promise<void>;
  close(): Promise<void>;
}

export type MessageHandler = (message: IncomingMessage) => Promise<void> | void;

export interface ProducerOptions {
  /**
   * After a reconnect, hold a publish until the topic has a subscriber again, where the transport can tell
   * (connection-status.ts): for topics someone is known to read, a client's replies or a service's requests.
   */
  awaitSubscriber?: boolean;
  /**
   * The subscription the replies to these publishes come back on (a request client's): where the transport gates
   * a publish on the links it needs (native), a publish also waits for this one to be connected.
   */
  replies?: Consumer;
}

export interface SubscribeOptions {
  topic: string;
  subscription: string;
  subscriptionType: SubscriptionType;
  /** Maximum number of unacknowledged messages delivered at once (flow control). Default 1000. */
  receiverQueueSize?: number;
  /** Delay before a negatively acknowledged message is redelivered. Default 1000 ms. */
  negativeAckRedeliveryDelayMs?: number;
  handler: MessageHandler;
}

export interface Consumer {
  readonly topic: string;
  readonly subscription: string;
  /** Stop delivery and close; `unsubscribe` also removes the subscription on the broker. */
  close(options?: { unsubscribe?: boolean }): Promise<void>;
}

export interface TransportStatus {
  /** True while every producer and consumer is connected. */
  connected: boolean;
  /** Human-readable reason when not connected. */
  detail?: string;
  /**
   * False while a consumer is down, where the transport tells consumers from producers (native): a replica that
   * cannot receive is not ready, while a producer down (one not used since the start, say) holds back only the
   * publishes that need it. Absent: as `connected`.
   */
  receiving?: boolean;
  /**
   * How many established producer or consumer connections have been lost so far (0 at start). A new epoch
   * begins at each loss; a reply awaited on a non-persistent topic across a change of epoch may be gone.
   */
  epoch: number;
}

/** Told of every change of `connected` or `epoch`, synchronously, in the order they happen. */
export type StatusListener = (status: TransportStatus) => void;

export interface Transport {
  /** A short name for logs and metrics: `websocket`, `native`, `memory`. */
  readonly kind: string;
  /** The largest receiver queue one consumer may have (the WebSocket API caps it); undefined: no cap. */
  readonly maxReceiverQueueSize?: number;
  createProducer(topic: string, options?: ProducerOptions): Promise<Producer>;
  /**
   * The largest payload one message with these properties can carry (the WebSocket API's text frame limit
   * less base64 and the frame's JSON; the broker's `maxMessageSize` for the binary protocol). Absent: no limit.
   */
  maxPayloadBytes?(properties?: Properties): number;
  subscribe(options: SubscribeOptions): Promise<Consumer>;
  /** The status now. */
  status(): TransportStatus;
  /** Listen to status changes (connected, disconnected, a new epoch); returns the function that stops listening. */
  onStatus(listener: StatusListener): () => void;
  close(): Promise<void>;
}
