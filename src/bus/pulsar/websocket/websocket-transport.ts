/**
 * The transport over Pulsar's WebSocket API (`/ws/v2/producer/...`, `/ws/v2/consumer/...`), using `ws`.
 * It needs no native code, so it runs anywhere; the broker must have `webSocketServiceEnabled=true`
 * (off by default in a TrustGraph cluster's broker.conf; the standalone conf turns it on).
 *
 * One WebSocket per producer and per consumer. Each one pings the broker to keep the session alive (and
 * to notice a dead peer), and reconnects with exponential backoff and jitter when it drops: a producer's
 * unacknowledged sends fail with a retriable error, a consumer subscribes again under the same
 * subscription name and carries on delivering. The first connect of a producer or consumer is bounded
 * (`connectAttempts`) so a start-up can report an unreachable broker; later reconnects retry forever
 * until `close()`.
 */
import { pino, type Logger } from 'pino';
import { ConnectionStatus, StatusReporting, type SubscriberCheck } from '../../connection-status.js';
import { InvalidUseError } from '../../../errors/index.js';
import { ConnectError, TransportClosedError } from '../../errors.js';
import type { Consumer, Producer, ProducerOptions, Properties, SubscribeOptions, Transport, TransportStatus } from '../../transport.js';
import { WebSocketConsumer } from './consumer.js';
import { SocketHeal, type SocketHealOptions } from './socket-heal.js';
import type { TopicClientsReader } from '../topic-clients.js';
import type { LinkSettings } from './link.js';
import { type ProducerLimits, WebSocketProducer } from './producer.js';

export interface ReconnectOptions {
  /** Delay before the first retry. Default 200 ms. */
  initialDelayMs?: number;
  /** The delay doubles on every failed attempt up to this. Default 2000 ms. */
  maxDelayMs?: number;
  /** How long publishes wait after a lost connection is whole again (connection-status.ts). Default 3000 ms. */
  settleMs?: number;
}

export interface WebSocketTransportOptions {
  /** Base URL of the broker's web service. Default `ws://127.0.0.1:8080`. */
  url?: string;
  /** JWT sent as `Authorization: Bearer <token>` on every upgrade. */
  token?: string;
  /** Default: silent. */
  logger?: Logger;
  /** WebSocket ping period; a socket with no pong for two periods is dropped and reconnected. Default 30000. */
  pingIntervalMs?: number;
  reconnect?: ReconnectOptions;
  /** Attempts of the first connect of a producer or consumer before it fails. Default 5. */
  connectAttempts?: number;
  /** The broker's `webSocketMaxTextFrameSize`; larger frames are refused before sending. Default 1 MiB. */
  maxFrameBytes?: number;
  /** How long `send` waits for a reconnecting producer before failing. Default 30000 ms. */
  sendTimeoutMs?: number;
  /**
   * How long a written message waits for the broker's acknowledgement before its send fails (retriable: it may
   * or may not have been published) and the producer's socket is reopened. Default 10000 ms. With `topicClients`,
   * a producer the broker lacks after a move is reopened sooner (socket-heal.ts).
   */
  ackTimeoutMs?: number;
  /** Timeout of one WebSocket upgrade. Default 10000 ms. */
  handshakeTimeoutMs?: number;
  /** After a reconnect, asks whether a non-persistent topic has a subscriber again before publishing to it. */
  subscribers?: SubscriberCheck;
  /**
   * The consumer and producer names the broker has on a topic (its admin API): with it, a consumer or producer whose
   * socket is open while the broker has no client of its name behind it is reopened, for a while after a topic may
   * have moved (socket-heal.ts). Without it, nothing is checked.
   */
  topicClients?: TopicClientsReader;
  /** The socket heal's timings (socket-heal.ts). */
  heal?: Pick<SocketHealOptions, 'windowMs' | 'pollMs' | 'graceMs' | 'echoMs' | 'checkWaitMs' | 'probeMs' | 'sweepMs'>;
}

const DEFAULTS = {
  url: 'ws://127.0.0.1:8080',
  pingIntervalMs: 30_000,
  initialDelayMs: 200,
  // A link retries at least every 2 s, so it is back within 2 s of the broker (bench:faults); an attempt against a
  // broker that is down costs one refused connection.
  maxDelayMs: 2000,
  connectAttempts: 5,
  maxFrameBytes: 1_048_576,
  sendTimeoutMs: 30_000,
  // A healthy broker acknowledges in milliseconds and a busy one in a second or two; a send still unacknowledged
  // after this is held by the WebSocket service's own producer (see producer.ts), which a new socket replaces.
  ackTimeoutMs: 10_000,
  handshakeTimeoutMs: 10_000,
} as const;

const DEFAULT_RECEIVER_QUEUE_SIZE = 1000;
/** The WebSocket service caps receiverQueueSize at 1000. */
const MAX_RECEIVER_QUEUE_SIZE = 1000;
/** Our interface's default; the WebSocket service's own default is 60000 ms. */
const DEFAULT_NACK_DELAY_MS = 1000;

export class WebSocketTransport extends StatusReporting implements Transport {
  readonly kind = 'websocket';
  readonly maxReceiverQueueSize = MAX_RECEIVER_QUEUE_SIZE;
  private readonly baseUrl: string;
  private readonly settings: LinkSettings;
  private readonly limits: ProducerLimits;
  private readonly producers = new Set<WebSocketProducer>();
  private readonly consumers = new Set<WebSocketConsumer>();
  protected readonly connection: ConnectionStatus;
  private readonly heal: SocketHeal | undefined;
  private closed = false;

  constructor(options: WebSocketTransportOptions = {}) {
    super();
    const url = options.url ?? DEFAULTS.url;
    if (!/^wss?:\/\/[^/]+/.test(url)) {
      throw new InvalidUseError(`url must be a ws:// or wss:// URL of the broker's web service, got "${url}"`);
    }
    this.baseUrl = url.replace(/\/+$/, '');
    const settings: LinkSettings = {
      token: options.token,
      logger: options.logger ?? pino({ level: 'silent' }),
      pingIntervalMs: positive('pingIntervalMs', options.pingIntervalMs ?? DEFAULTS.pingIntervalMs),
      initialDelayMs: positive('reconnect.initialDelayMs', options.reconnect?.initialDelayMs ?? DEFAULTS.initialDelayMs),
      maxDelayMs: positive('reconnect.maxDelayMs', options.reconnect?.maxDelayMs ?? DEFAULTS.maxDelayMs),
      connectAttempts: positiveInteger('connectAttempts', options.connectAttempts ?? DEFAULTS.connectAttempts),
      handshakeTimeoutMs: positive('handshakeTimeoutMs', options.handshakeTimeoutMs ?? DEFAULTS.handshakeTimeoutMs),
      onLinkChange: (lost, reopened) => {
        // A new epoch gives up every call waiting for a reply (request-client.ts), on every subscription of the
        // transport, and fails those that may act. A socket we reopened ourselves (the heal, the ack timeout) begins
        // none: a producer's carries no reply, and a consumer's was reopened because the service had no consumer
        // behind it, which loses only what its own subscription was sent meanwhile: the calls waiting on it end by
        // their own deadline or hedge, and the calls on the other subscriptions wait on. A broker that goes drops
        // the sockets itself, and they begin the new epoch.
        this.refresh(reopened ? undefined : lost);
        // A link we dropped on purpose is no news of a move: the reopen's cause already said so, or was the heal's.
        if (lost !== undefined && !reopened) this.heal?.moved(lost);
      },
      onMoved: (why) => this.heal?.moved(why),
      beforeSend: (producer) => this.heal?.beforeSend(producer),
      onSent: (topic) => this.heal?.sent(topic),
      onDelivered: (topic) => this.heal?.delivered(topic),
      // The links a publish needs, where the subscriber check tells when the other side is back; without it the
      // whole transport: one link is often back a second before the others, and the other side after them.
      settled: (maxWaitMs, topic, links) => this.connection.settled(maxWaitMs, topic, options.subscribers ? links : undefined),
    };
    this.heal = options.topicClients
      ? new SocketHeal({ ...options.heal, read: options.topicClients, logger: settings.logger.child({ component: 'socket-heal' }) })
      : undefined;
    this.connection = new ConnectionStatus(options.reconnect?.settleMs, options.subscribers);
    if (settings.maxDelayMs < settings.initialDelayMs) {
      throw new InvalidUseError('reconnect.maxDelayMs must not be smaller than reconnect.initialDelayMs');
    }
    this.settings = settings;
    this.limits = {
      maxFrameBytes: positiveInteger('maxFrameBytes', options.maxFrameBytes ?? DEFAULTS.maxFrameBytes),
      sendTimeoutMs: positive('sendTimeoutMs', options.sendTimeoutMs ?? DEFAULTS.sendTimeoutMs),
      ackTimeoutMs: positive('ackTimeoutMs', options.ackTimeoutMs ?? DEFAULTS.ackTimeoutMs),
    };
  }

  maxPayloadBytes(properties: Properties = {}): number {
    // The frame is {"payload":"<base64>","properties":{...},"context":"<n>"}; 128 bytes cover the rest.
    const room = this.limits.maxFrameBytes - Buffer.byteLength(JSON.stringify(properties), 'utf8') - 128;
    return Math.max(0, Math.floor(room / 4) * 3);
  }

  async createProducer(topic: string, options: ProducerOptions = {}): Promise<Producer> {
    this.assertOpen();
    const base = `${this.baseUrl}/ws/v2/producer/${topicPath(topic)}`;
    const url = (producerName: string): string => `${base}?producerName=${encodeURIComponent(producerName)}`;
    const replies = options.replies instanceof WebSocketConsumer && this.consumers.has(options.replies) ? [options.replies.publishLink] : [];
    const producer = new WebSocketProducer(topic, url, this.settings, this.limits, options.awaitSubscriber ?? false, replies, () => {
      this.producers.delete(producer);
      unwatch?.();
    });
    const unwatch = this.heal?.add(producer);
    this.producers.add(producer);
    try {
      await producer.start();
    } catch (err) {
      this.producers.delete(producer);
      await producer.close();
      throw err;
    }
    return producer;
  }

  async subscribe(options: SubscribeOptions): Promise<Consumer> {
    this.assertOpen();
    const receiverQueueSize = options.receiverQueueSize ?? DEFAULT_RECEIVER_QUEUE_SIZE;
    positiveInteger('receiverQueueSize', receiverQueueSize);
    const nackDelayMs = options.negativeAckRedeliveryDelayMs ?? DEFAULT_NACK_DELAY_MS;
    if (!Number.isInteger(nackDelayMs) || nackDelayMs < 0) {
      throw new InvalidUseError(`negativeAckRedeliveryDelayMs must be an integer >= 0, got ${nackDelayMs}`);
    }
    if (options.subscription.length === 0) throw new InvalidUseError('subscription must not be empty');
    const query = new URLSearchParams({
      subscriptionType: options.subscriptionType,
      receiverQueueSize: String(Math.min(receiverQueueSize, MAX_RECEIVER_QUEUE_SIZE)),
      negativeAckRedeliveryDelay: String(nackDelayMs),
    });
    const base = `${this.baseUrl}/ws/v2/consumer/${topicPath(options.topic)}/${encodeURIComponent(options.subscription)}`;
    const url = (consumerName: string): string => `${base}?${query.toString()}&consumerName=${encodeURIComponent(consumerName)}`;
    const consumer = new WebSocketConsumer(options, url, this.settings, () => {
      this.consumers.delete(consumer);
      unwatch?.();
    });
    const unwatch = this.heal?.add(consumer);
    this.consumers.add(consumer);
    try {
      await consumer.start();
    } catch (err) {
      this.consumers.delete(consumer);
      await consumer.close();
      throw err;
    }
    return consumer;
  }

  override status(): TransportStatus {
    return { ...this.linkStatus(), epoch: this.connection.get().epoch };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.heal?.stop();
    this.refresh();
    const all = [...this.producers, ...this.consumers];
    this.producers.clear();
    this.consumers.clear();
    await Promise.all(all.map((c) => c.close()));
  }

  private assertOpen(): void {
    if (this.closed) throw new TransportClosedError('websocket transport');
  }

  private linkStatus(): { connected: boolean; detail?: string } {
    if (this.closed) return { connected: false, detail: 'websocket transport closed' };
    const down = [...this.producers, ...this.consumers].map((c) => c.downDetail()).filter((d) => d !== undefined);
    return down.length === 0 ? { connected: true } : { connected: false, detail: down.join('; ') };
  }

  private refresh(lost?: string): void {
    const { connected, detail } = this.linkStatus();
    if (lost !== undefined) this.connection.lost(detail ?? lost);
    else this.connection.set(connected, detail);
  }
}

/** `persistent://tenant/ns/topic` → `persistent/tenant/ns/topic`, each segment URL-encoded (colons included). */
function topicPath(topic: string): string {
  const match = /^(persistent|non-persistent):\/\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(topic);
  if (!match) {
    throw new ConnectError(
      `not a full Pulsar topic name: "${topic}" (expected persistent://tenant/namespace/topic or non-persistent://...)`,
      topic,
      400,
    );
  }
  return match.slice(1).map((segment) => encodeURIComponent(segment)).join('/');
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new InvalidUseError(`${name} must be a finite number greater than 0, got ${value}`);
  return value;
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) throw new InvalidUseError(`${name} must be an integer greater than 0, got ${value}`);
  return value;
}
