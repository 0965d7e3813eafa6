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
import WebSocket from 'ws';
import { ConnectionStatus } from './connection-status.js';
import {
  ConnectError,
  FrameTooLargeError,
  isRetriableStatus,
  ProducerSendError,
  TransportClosedError,
  TransportError,
} from './errors.js';
import type {
  Consumer,
  IncomingMessage,
  OutgoingMessage,
  Producer,
  Properties,
  StatusListener,
  SubscribeOptions,
  Transport,
  TransportStatus,
} from './transport.js';

export interface ReconnectOptions {
  /** Delay before the first retry. Default 200 ms. */
  initialDelayMs?: number;
  /** The delay doubles on every failed attempt up to this. Default 10000 ms. */
  maxDelayMs?: number;
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
  /** Timeout of one WebSocket upgrade. Default 10000 ms. */
  handshakeTimeoutMs?: number;
}

interface LinkSettings {
  readonly token: string | undefined;
  readonly logger: Logger;
  readonly pingIntervalMs: number;
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  readonly connectAttempts: number;
  readonly handshakeTimeoutMs: number;
  /** A link changed state; `lost` when an open connection dropped. */
  readonly onLinkChange: (lost?: string) => void;
}

const DEFAULTS = {
  url: 'ws://127.0.0.1:8080',
  pingIntervalMs: 30_000,
  initialDelayMs: 200,
  maxDelayMs: 10_000,
  connectAttempts: 5,
  maxFrameBytes: 1_048_576,
  sendTimeoutMs: 30_000,
  handshakeTimeoutMs: 10_000,
} as const;

const DEFAULT_RECEIVER_QUEUE_SIZE = 1000;
/** The WebSocket service caps receiverQueueSize at 1000. */
const MAX_RECEIVER_QUEUE_SIZE = 1000;
/** Our interface's default; the WebSocket service's own default is 60000 ms. */
const DEFAULT_NACK_DELAY_MS = 1000;

export class WebSocketTransport implements Transport {
  readonly kind = 'websocket';
  readonly maxReceiverQueueSize = MAX_RECEIVER_QUEUE_SIZE;
  private readonly baseUrl: string;
  private readonly settings: LinkSettings;
  private readonly maxFrameBytes: number;
  private readonly sendTimeoutMs: number;
  private readonly producers = new Set<WebSocketProducer>();
  private readonly consumers = new Set<WebSocketConsumer>();
  private readonly connection = new ConnectionStatus();
  private closed = false;

  constructor(options: WebSocketTransportOptions = {}) {
    const url = options.url ?? DEFAULTS.url;
    if (!/^wss?:\/\/[^/]+/.test(url)) {
      throw new TypeError(`url must be a ws:// or wss:// URL of the broker's web service, got "${url}"`);
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
      onLinkChange: (lost) => this.refresh(lost),
    };
    if (settings.maxDelayMs < settings.initialDelayMs) {
      throw new TypeError('reconnect.maxDelayMs must not be smaller than reconnect.initialDelayMs');
    }
    this.settings = settings;
    this.maxFrameBytes = positiveInteger('maxFrameBytes', options.maxFrameBytes ?? DEFAULTS.maxFrameBytes);
    this.sendTimeoutMs = positive('sendTimeoutMs', options.sendTimeoutMs ?? DEFAULTS.sendTimeoutMs);
  }

  maxPayloadBytes(properties: Properties = {}): number {
    // The frame is {"payload":"<base64>","properties":{...},"context":"<n>"}; 128 bytes cover the rest.
    const room = this.maxFrameBytes - Buffer.byteLength(JSON.stringify(properties), 'utf8') - 128;
    return Math.max(0, Math.floor(room / 4) * 3);
  }

  async createProducer(topic: string): Promise<Producer> {
    this.assertOpen();
    const url = `${this.baseUrl}/ws/v2/producer/${topicPath(topic)}`;
    const producer = new WebSocketProducer(topic, url, this.settings, this.maxFrameBytes, this.sendTimeoutMs, () =>
      this.producers.delete(producer),
    );
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
      throw new TypeError(`negativeAckRedeliveryDelayMs must be an integer >= 0, got ${nackDelayMs}`);
    }
    if (options.subscription.length === 0) throw new TypeError('subscription must not be empty');
    const query = new URLSearchParams({
      subscriptionType: options.subscriptionType,
      receiverQueueSize: String(Math.min(receiverQueueSize, MAX_RECEIVER_QUEUE_SIZE)),
      negativeAckRedeliveryDelay: String(nackDelayMs),
    });
    const url =
      `${this.baseUrl}/ws/v2/consumer/${topicPath(options.topic)}/` +
      `${encodeURIComponent(options.subscription)}?${query.toString()}`;
    const consumer = new WebSocketConsumer(options, url, this.settings, () => this.consumers.delete(consumer));
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

  status(): TransportStatus {
    return { ...this.linkStatus(), epoch: this.connection.get().epoch };
  }

  onStatus(listener: StatusListener): () => void {
    return this.connection.on(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
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

/**
 * `send` gave up waiting for a reconnecting producer. The message was never written to any socket, so
 * sending it again cannot publish it twice (unlike a connection lost after the write, whose error says the
 * message may or may not have been published). Retriable.
 */
export class NotConnectedError extends TransportError {
  override readonly name = 'NotConnectedError';
  override readonly code = 'TG_TRANSPORT_NOT_CONNECTED';

  constructor(message: string) {
    super(message, { retriable: true });
  }
}

// ---------------------------------------------------------------------------------------------------------
// One WebSocket that reconnects.

interface LinkHandlers {
  onOpen(ws: WebSocket): void;
  onText(text: string): void;
  /** The open connection was lost; a reconnect is scheduled unless the link is closed. */
  onDown(error: TransportError): void;
}

type LinkState = 'idle' | 'connecting' | 'open' | 'reconnecting' | 'closed';

/** The raw outcome of one failed upgrade. */
class UpgradeFailure extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

class Link {
  private state: LinkState = 'idle';
  private socket: WebSocket | undefined;
  private timer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private missedPongs = 0;
  private attempt = 0;
  private lastError: string | undefined;
  private openWaiters = new Set<{ resolve: (ws: WebSocket) => void; reject: (err: Error) => void }>();
  private cancelSleep: (() => void) | undefined;
  private closedPromise: Promise<void> | undefined;

  constructor(
    /** e.g. `producer for persistent://...` */
    readonly label: string,
    private readonly url: string,
    private readonly settings: LinkSettings,
    private readonly handlers: LinkHandlers,
  ) {}

  isClosed(): boolean {
    return this.state === 'closed';
  }

  get current(): WebSocket | undefined {
    return this.state === 'open' ? this.socket : undefined;
  }

  /** First connect: bounded attempts; a non-retriable refusal fails at once. */
  async start(): Promise<void> {
    this.state = 'connecting';
    this.settings.onLinkChange();
    const { connectAttempts, logger } = this.settings;
    for (let attempt = 1; ; attempt++) {
      try {
        const ws = await this.connectOnce();
        this.attach(ws);
        return;
      } catch (err) {
        const failure = toFailure(err);
        this.lastError = failure.message;
        if (this.isClosed()) throw new TransportClosedError(this.label);
        const retriable = isRetriableFailure(failure);
        if (!retriable || attempt >= connectAttempts) {
          this.state = 'closed';
          this.settings.onLinkChange();
          throw new ConnectError(
            `cannot create ${this.label} at ${redact(this.url)}` +
              (retriable ? ` after ${attempt} attempts` : ' (not retriable)') +
              `: ${failure.message}`,
            redact(this.url),
            failure.status,
            { cause: err, retriable },
          );
        }
        const delay = this.backoff(attempt);
        logger.warn({ link: this.label, attempt, delayMs: delay, err: failure.message }, 'connect failed, retrying');
        await this.sleep(delay);
        if (this.isClosed()) throw new TransportClosedError(this.label);
      }
    }
  }

  /** The open socket, waiting up to `timeoutMs` for a reconnect. */
  whenOpen(timeoutMs: number): Promise<WebSocket> {
    const ws = this.current;
    if (ws) return Promise.resolve(ws);
    if (this.state === 'closed') return Promise.reject(new TransportClosedError(this.label));
    return new Promise<WebSocket>((resolve, reject) => {
      const waiter = {
        resolve: (socket: WebSocket) => {
          clearTimeout(timer);
          resolve(socket);
        },
        reject: (err: Error) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      const timer = setTimeout(() => {
        this.openWaiters.delete(waiter);
        reject(new NotConnectedError(`${this.label} is not connected after ${timeoutMs} ms (${this.lastError ?? 'reconnecting'})`));
      }, timeoutMs);
      this.openWaiters.add(waiter);
    });
  }

  /** Undefined while open; otherwise why not. */
  downDetail(): string | undefined {
    switch (this.state) {
      case 'open':
        return undefined;
      case 'closed':
        return `${this.label}: closed`;
      case 'reconnecting':
        return `${this.label}: reconnecting (attempt ${this.attempt}${this.lastError ? `, last error: ${this.lastError}` : ''})`;
      default:
        return `${this.label}: connecting`;
    }
  }

  /** Closes the socket and stops reconnecting; `beforeClose` may send a last frame on the open socket. */
  close(beforeClose?: (ws: WebSocket) => void): Promise<void> {
    if (this.closedPromise) return this.closedPromise;
    const ws = this.socket;
    const wasOpen = this.state === 'open';
    this.state = 'closed';
    clearTimeout(this.timer);
    this.stopPing();
    this.cancelSleep?.();
    for (const waiter of this.openWaiters) waiter.reject(new TransportClosedError(this.label));
    this.openWaiters.clear();
    this.settings.onLinkChange();
    this.closedPromise = new Promise<void>((resolve) => {
      if (!ws || ws.readyState === WebSocket.CLOSED) {
        resolve();
        return;
      }
      const force = setTimeout(() => ws.terminate(), 2000);
      ws.once('close', () => {
        clearTimeout(force);
        resolve();
      });
      if (wasOpen && beforeClose) {
        try {
          beforeClose(ws);
        } catch (err) {
          this.settings.logger.debug({ link: this.label, err }, 'last frame before close failed');
        }
      }
      if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
      else ws.close(1000, 'closed by client');
    });
    return this.closedPromise;
  }

  private connectOnce(): Promise<WebSocket> {
    return new Promise<WebSocket>((resolve, reject) => {
      const headers: Record<string, string> = {};
      if (this.settings.token) headers.Authorization = `Bearer ${this.settings.token}`;
      // No permessage-deflate (ws enables it by default on clients): compressing every small frame doubled the
      // agent's CPU per iteration (bench/iteration.ts, docs/benchmarks.md).
      const ws = new WebSocket(this.url, { headers, handshakeTimeout: this.settings.handshakeTimeoutMs, perMessageDeflate: false });
      this.socket = ws;
      let status: number | undefined;
      let refusal = '';
      let lastError: Error | undefined;
      ws.on('unexpected-response', (_req, res) => {
        status = res.statusCode;
        refusal = res.statusMessage ?? '';
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (body.length < 4096) body += chunk;
        });
        let finished = false;
        const done = (): void => {
          if (finished) return;
          finished = true;
          const text = summariseBody(body);
          if (text && !refusal.includes(text)) refusal = refusal ? `${refusal}: ${text}` : text;
          ws.terminate();
        };
        res.once('end', done);
        res.once('error', done);
        setTimeout(done, 2000).unref();
      });
      ws.on('error', (err) => {
        lastError = err;
      });
      ws.once('open', () => {
        ws.removeAllListeners('unexpected-response');
        ws.removeAllListeners('close');
        resolve(ws);
      });
      ws.once('close', () => {
        if (status !== undefined) {
          reject(new UpgradeFailure(`HTTP ${status}${refusal ? ` ${refusal}` : ''}`, status));
        } else {
          reject(new UpgradeFailure(lastError?.message ?? 'connection closed during the upgrade', undefined, { cause: lastError }));
        }
      });
      if (this.state === 'closed') ws.terminate();
    });
  }

  private attach(ws: WebSocket): void {
    if (this.state === 'closed') {
      ws.terminate();
      return;
    }
    const { logger } = this.settings;
    this.state = 'open';
    this.socket = ws;
    this.attempt = 0;
    this.lastError = undefined;
    ws.removeAllListeners('error');
    ws.on('error', (err) => {
      this.lastError = err.message;
      logger.warn({ link: this.label, err: err.message }, 'websocket error');
    });
    ws.on('message', (data, isBinary) => {
      this.missedPongs = 0;
      if (isBinary) {
        logger.warn({ link: this.label }, 'ignoring a binary frame');
        return;
      }
      this.handlers.onText(rawToString(data));
    });
    ws.on('pong', () => {
      this.missedPongs = 0;
    });
    ws.on('close', (code, reason) => this.onClose(ws, code, reason.toString()));
    this.startPing(ws);
    this.settings.onLinkChange();
    this.handlers.onOpen(ws);
    for (const waiter of this.openWaiters) waiter.resolve(ws);
    this.openWaiters.clear();
  }

  private onClose(ws: WebSocket, code: number, reason: string): void {
    if (this.socket !== ws) return;
    this.stopPing();
    this.socket = undefined;
    if (this.state === 'closed') return;
    const why = `connection closed (code ${code}${reason ? `, ${reason}` : ''})`;
    this.lastError = why;
    this.state = 'reconnecting';
    this.settings.logger.warn({ link: this.label, code, reason }, 'websocket closed, reconnecting');
    this.handlers.onDown(new TransportError(`${this.label}: ${why}`, { retriable: true }));
    this.settings.onLinkChange(`${this.label}: ${why}`);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.state === 'closed') return;
    this.attempt += 1;
    const delay = this.backoff(this.attempt);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.state === 'closed') return;
      this.connectOnce().then(
        (ws) => {
          this.settings.logger.info({ link: this.label, attempt: this.attempt }, 'reconnected');
          this.attach(ws);
        },
        (err: unknown) => {
          const failure = toFailure(err);
          this.lastError = failure.message;
          // A broker away for minutes must not flood the log: warn on the first attempts and every tenth.
          const level = this.attempt <= 3 || this.attempt % 10 === 0 ? 'warn' : 'debug';
          this.settings.logger[level](
            { link: this.label, attempt: this.attempt, status: failure.status, err: failure.message },
            'reconnect failed',
          );
          this.scheduleReconnect();
        },
      );
    }, delay);
  }

  private startPing(ws: WebSocket): void {
    this.stopPing();
    this.missedPongs = 0;
    this.pingTimer = setInterval(() => {
      if (ws.readyState !== WebSocket.OPEN) return;
      if (this.missedPongs >= 2) {
        this.settings.logger.warn({ link: this.label }, 'no pong for two ping intervals: dropping the connection');
        ws.terminate();
        return;
      }
      this.missedPongs += 1;
      ws.ping();
    }, this.settings.pingIntervalMs);
    this.pingTimer.unref();
  }

  private stopPing(): void {
    clearInterval(this.pingTimer);
    this.pingTimer = undefined;
  }

  /** Exponential backoff with equal jitter: between half and all of min(max, initial * 2^(attempt-1)). */
  private backoff(attempt: number): number {
    const { initialDelayMs, maxDelayMs } = this.settings;
    const ceiling = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.min(attempt - 1, 30));
    return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.cancelSleep = undefined;
        resolve();
      }, ms);
      this.cancelSleep = () => {
        clearTimeout(timer);
        this.cancelSleep = undefined;
        resolve();
      };
    });
  }
}

// ---------------------------------------------------------------------------------------------------------
// Producer

interface PendingSend {
  resolve(): void;
  reject(err: Error): void;
}

class WebSocketProducer implements Producer {
  private readonly link: Link;
  private readonly pending = new Map<string, PendingSend>();
  private nextContext = 0;
  private closed = false;

  constructor(
    readonly topic: string,
    url: string,
    settings: LinkSettings,
    private readonly maxFrameBytes: number,
    private readonly sendTimeoutMs: number,
    private readonly onClosed: () => void,
  ) {
    this.link = new Link(`producer for ${topic}`, url, settings, {
      onOpen: () => undefined,
      onText: (text) => this.onAck(text, settings.logger),
      onDown: (error) => this.failPending(error),
    });
  }

  start(): Promise<void> {
    return this.link.start();
  }

  downDetail(): string | undefined {
    return this.link.downDetail();
  }

  async send(message: OutgoingMessage): Promise<void> {
    if (this.closed) throw new TransportClosedError(`producer for ${this.topic}`);
    const context = String(++this.nextContext);
    const frame = JSON.stringify({
      payload: message.payload.toString('base64'),
      properties: message.properties ?? {},
      context,
    });
    const frameBytes = Buffer.byteLength(frame, 'utf8');
    if (frameBytes > this.maxFrameBytes) {
      throw new FrameTooLargeError(this.topic, frameBytes, this.maxFrameBytes, message.payload.length);
    }
    const ws = await this.link.whenOpen(this.sendTimeoutMs);
    return new Promise<void>((resolve, reject) => {
      this.pending.set(context, { resolve, reject });
      ws.send(frame, (err) => {
        if (!err) return;
        if (this.pending.delete(context)) {
          reject(new TransportError(`could not write to ${this.link.label}: ${err.message}`, { retriable: true, cause: err }));
        }
      });
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onClosed();
    await this.link.close();
    this.failPending(new TransportClosedError(`producer for ${this.topic}`));
  }

  private onAck(text: string, logger: Logger): void {
    let ack: { result?: unknown; context?: unknown; errorMsg?: unknown };
    try {
      ack = JSON.parse(text) as typeof ack;
    } catch {
      logger.warn({ link: this.link.label, frame: text.slice(0, 200) }, 'unparseable frame from broker');
      return;
    }
    const context = typeof ack.context === 'string' ? ack.context : undefined;
    const waiter = context === undefined ? undefined : this.pending.get(context);
    if (!waiter || context === undefined) {
      logger.debug({ link: this.link.label, frame: text.slice(0, 200) }, 'ack for no pending send');
      return;
    }
    this.pending.delete(context);
    if (ack.result === 'ok') {
      waiter.resolve();
      return;
    }
    const result = String(ack.result);
    const match = /^send-error:(\d+)$/.exec(result);
    const brokerMessage = typeof ack.errorMsg === 'string' ? ack.errorMsg : result;
    waiter.reject(new ProducerSendError(this.topic, match?.[1] ? Number(match[1]) : -1, brokerMessage));
  }

  private failPending(cause: TransportError): void {
    if (this.pending.size === 0) return;
    const waiters = [...this.pending.values()];
    this.pending.clear();
    const error =
      cause instanceof TransportClosedError
        ? cause
        : new TransportError(
            `${this.link.label}: connection lost before the broker acknowledged the message ` +
              `(it may or may not have been published): ${cause.message}`,
            { retriable: true, cause },
          );
    for (const waiter of waiters) waiter.reject(error);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Consumer

interface MessageFrame {
  messageId: string;
  payload: string;
  properties?: Properties | null;
  redeliveryCount?: number;
}

class WebSocketConsumer implements Consumer {
  readonly topic: string;
  readonly subscription: string;
  private readonly link: Link;
  private readonly logger: Logger;
  private closed = false;

  constructor(
    private readonly options: SubscribeOptions,
    url: string,
    settings: LinkSettings,
    private readonly onClosed: () => void,
  ) {
    this.topic = options.topic;
    this.subscription = options.subscription;
    this.logger = settings.logger;
    this.link = new Link(`consumer ${options.subscription} on ${options.topic}`, url, settings, {
      onOpen: () => undefined,
      onText: (text) => this.onFrame(text),
      onDown: () => undefined,
    });
  }

  start(): Promise<void> {
    return this.link.start();
  }

  downDetail(): string | undefined {
    return this.link.downDetail();
  }

  async close(options?: { unsubscribe?: boolean }): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onClosed();
    await this.link.close(options?.unsubscribe ? (ws) => ws.send(JSON.stringify({ type: 'unsubscribe' })) : undefined);
  }

  private onFrame(text: string): void {
    if (this.closed) return;
    let frame: Partial<MessageFrame>;
    try {
      frame = JSON.parse(text) as Partial<MessageFrame>;
    } catch {
      this.logger.warn({ link: this.link.label, frame: text.slice(0, 200) }, 'unparseable frame from broker');
      return;
    }
    if (typeof frame.messageId !== 'string' || typeof frame.payload !== 'string') {
      this.logger.debug({ link: this.link.label, frame: text.slice(0, 200) }, 'ignoring a non-message frame');
      return;
    }
    this.dispatch(frame as MessageFrame);
  }

  private dispatch(frame: MessageFrame): void {
    let settled = false;
    const command = async (body: Record<string, string>): Promise<void> => {
      if (settled || this.closed) return;
      settled = true;
      await this.sendCommand(body);
    };
    const message: IncomingMessage = {
      messageId: frame.messageId,
      topic: this.topic,
      payload: Buffer.from(frame.payload, 'base64'),
      properties: frame.properties ?? {},
      redeliveryCount: typeof frame.redeliveryCount === 'number' ? frame.redeliveryCount : 0,
      ack: () => command({ messageId: frame.messageId }),
      nack: () => command({ type: 'negativeAcknowledge', messageId: frame.messageId }),
    };
    void (async () => {
      try {
        await this.options.handler(message);
      } catch (err) {
        this.logger.warn(
          { err, topic: this.topic, subscription: this.subscription, messageId: frame.messageId },
          'handler failed: nack',
        );
        await message.nack();
      }
    })();
  }

  /**
   * Acks and nacks go on the current connection, even for a message delivered on an earlier one: the broker
   * acknowledges by position on the subscription, so that still stops a redelivery. With no connection the
   * command is dropped and the broker redelivers the message.
   */
  private sendCommand(body: Record<string, string>): Promise<void> {
    const ws = this.link.current;
    if (!ws) {
      this.logger.debug({ link: this.link.label, body }, 'not connected: ack/nack dropped, the broker will redeliver');
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      ws.send(JSON.stringify(body), (err) => {
        if (err) this.logger.debug({ link: this.link.label, err: err.message }, 'ack/nack not written');
        resolve();
      });
    });
  }
}

// ---------------------------------------------------------------------------------------------------------
// Helpers

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

function toFailure(err: unknown): UpgradeFailure {
  if (err instanceof UpgradeFailure) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new UpgradeFailure(message, undefined, { cause: err });
}

function isRetriableFailure(failure: UpgradeFailure): boolean {
  return isRetriableStatus(failure.status);
}

/**
 * The broker answers a refused upgrade with a Jetty error page whose text holds the reason, often as JSON:
 * `Error 409 Failed to create producer/consumer: {"errorMsg":"Exclusive consumer is already connected",...}`.
 */
function summariseBody(body: string): string {
  const text = body
    .replace(/<[^>]*>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
  const errorMsg = /"errorMsg"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(text)?.[1];
  if (errorMsg) return errorMsg;
  const jetty = /^Error \d+ (.*?)(?: HTTP ERROR \d+.*)?$/.exec(text)?.[1];
  return (jetty ?? text).slice(0, 300);
}

function rawToString(data: WebSocket.RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

/** Never log a token that somebody put in the URL. */
function redact(url: string): string {
  return url.replace(/([?&]token=)[^&]*/g, '$1***');
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`${name} must be a finite number greater than 0, got ${value}`);
  return value;
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) throw new TypeError(`${name} must be an integer greater than 0, got ${value}`);
  return value;
}
