/**
 * A producer over the WebSocket API: each send is a JSON frame with a `context` the broker's ack echoes. Sends
 * wait (up to `sendTimeoutMs`) for a reconnecting link; sends not yet acknowledged when the connection drops fail
 * with a retriable error, since they may or may not have been published.
 *
 * The broker's WebSocket service publishes through a producer of its own, which reconnects behind our open socket
 * when the topic moves (on a backoff that grows to a minute), and has been seen to hold a send for minutes after a
 * move. A new socket gets a new producer there, looked up afresh. Each socket registers under a producer name of its
 * own (`producerName`): a send unacknowledged for `MOVE_SIGN_MS` is taken as a sign that the topic may have moved,
 * and the socket heal (socket-heal.ts) reopens the socket once the topic's stats lack that name; after such a sign,
 * the heal also checks a socket idle through the move before its next send is written. Where nothing
 * else reopens it, a send the broker has not acknowledged after `ackTimeoutMs` fails the same way, and the socket
 * is reopened.
 */
import type { Logger } from 'pino';
import { FrameTooLargeError, NotConnectedError, ProducerSendError, TransportClosedError, TransportError, UnacknowledgedSendError } from '../../errors.js';
import type { OutgoingMessage, Producer } from '../../transport.js';
import { Link, type LinkSettings } from './link.js';
import { sendCoalesced } from './coalesced-writes.js';
import type { HealSocket, HealTarget } from './socket-heal.js';
import type { PublishLink } from '../../connection-status.js';

/** `{"payload":"` */
const FRAME_HEAD_BYTES = 12;
/**
 * A send unacknowledged this long is a sign that its topic may have moved (at most half the ack timeout): the socket
 * heal then reads the topic's stats. A healthy broker acknowledges in milliseconds, a busy one in a second or two;
 * a sign costs a few stats reads, never a send.
 */
const MOVE_SIGN_MS = 2_000;

interface PendingSend {
  resolve(): void;
  reject(err: Error): void;
  /** Date.now() when the frame was written. */
  readonly sentAt: number;
  /** Its wait was reported as a sign of a move. */
  signalled?: boolean;
}

export interface ProducerLimits {
  /** The broker's `webSocketMaxTextFrameSize`. */
  readonly maxFrameBytes: number;
  /** How long a send waits for a reconnecting link. */
  readonly sendTimeoutMs: number;
  /** How long a written frame waits for the broker's ack before the send fails and the socket is reopened. */
  readonly ackTimeoutMs: number;
}

export class WebSocketProducer implements Producer, HealTarget {
  readonly subscription = undefined;
  private readonly link: Link;
  private readonly pending = new Map<string, PendingSend>();
  private nextContext = 0;
  /** The heal's check (socket-heal.ts, `beforeSend`) that sends are waiting for, until the last of them goes on. */
  private checked: Promise<void> | undefined;
  private closed = false;
  private readonly ackWatch: NodeJS.Timeout;
  private readonly moveSignMs: number;

  constructor(
    readonly topic: string,
    /** The producer endpoint's URL for a socket registering under `producerName`. */
    url: (producerName: string) => string,
    private readonly settings: LinkSettings,
    private readonly limits: ProducerLimits,
    private readonly awaitSubscriber: boolean,
    /** The other links its publishes need: a call's reply subscription. */
    private readonly alsoNeeds: readonly PublishLink[],
    private readonly onClosed: () => void,
  ) {
    this.link = new Link(`producer for ${topic}`, url, settings, {
      onOpen: () => undefined,
      onText: (text) => this.onAck(text, settings.logger),
      onDown: (error) => this.failPending(error),
    });
    this.moveSignMs = Math.min(MOVE_SIGN_MS, limits.ackTimeoutMs / 2);
    // One timer per producer, not one per send: the oldest pending send is the first in the map.
    this.ackWatch = setInterval(() => this.checkOldestAck(), Math.max(25, Math.floor(this.moveSignMs / 2)));
    this.ackWatch.unref();
  }

  start(): Promise<void> {
    return this.link.start();
  }

  downDetail(): string | undefined {
    return this.link.downDetail();
  }

  get socket(): HealSocket {
    return this.link;
  }

  /** A send has waited for its acknowledgement long enough to be a sign of a move. */
  waiting(): boolean {
    const oldest = this.pending.values().next();
    return !oldest.done && Date.now() - oldest.value.sentAt >= this.moveSignMs;
  }

  /** Fails the sends pending on the open socket (they may or may not have been published) and reopens it. */
  reopen(why: string): void {
    if (this.link.openForMs() === undefined) return;
    this.failPending(new TransportError(`${this.link.label}: ${why}`, { retriable: true }));
    this.link.reopen(why);
  }

  async send(message: OutgoingMessage): Promise<void> {
    if (this.closed) throw new TransportClosedError(`producer for ${this.topic}`);
    const context = String(++this.nextContext);
    // Base64 needs no JSON escaping and is one byte per character: the frame is put together around it
    // instead of JSON.stringify scanning (and Buffer.byteLength measuring) the payload's text again.
    const payload = message.payload.toString('base64');
    const rest = `","properties":${JSON.stringify(message.properties ?? {})}${message.key !== undefined ? `,"key":${JSON.stringify(message.key)}` : ''},"context":"${context}"}`;
    const frame = `{"payload":"${payload}${rest}`;
    const frameBytes = FRAME_HEAD_BYTES + payload.length + Buffer.byteLength(rest, 'utf8');
    const { maxFrameBytes, sendTimeoutMs } = this.limits;
    if (frameBytes > maxFrameBytes) {
      throw new FrameTooLargeError(this.topic, frameBytes, maxFrameBytes, message.payload.length);
    }
    // The links this publish needs (its own, a call's reply subscription), or the whole transport, up and settled
    // (connection-status.ts): one that is back less than the settle ago would publish before the topic's
    // subscribers are back.
    const links = [this.link, ...this.alsoNeeds];
    if (!(await this.settings.settled(sendTimeoutMs, this.awaitSubscriber ? this.topic : undefined, links))) {
      const down = links.filter((link) => !link.up()).map((link) => link.name);
      throw new NotConnectedError(`producer for ${this.topic} is not connected after ${sendTimeoutMs} ms (${down.length > 0 ? `reconnecting: ${down.join('; ')}` : 'reconnecting'})`);
    }
    // A send that comes while an earlier one still waits for the heal's check waits behind it, even once the check
    // itself is done: sends go out in the order they were made (a response stream's chunks, say).
    const check = this.settings.beforeSend?.(this) ?? this.checked;
    if (check) {
      this.checked = check;
      await check;
      if (this.checked === check) this.checked = undefined;
    }
    const ws = await this.link.whenOpen(sendTimeoutMs);
    return new Promise<void>((resolve, reject) => {
      this.pending.set(context, { resolve, reject, sentAt: Date.now() });
      sendCoalesced(ws, frame, (err) => {
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
    clearInterval(this.ackWatch);
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
      this.settings.onSent?.(this.topic);
      waiter.resolve();
      return;
    }
    const result = String(ack.result);
    const match = /^send-error:(\d+)$/.exec(result);
    const brokerMessage = typeof ack.errorMsg === 'string' ? ack.errorMsg : result;
    waiter.reject(new ProducerSendError(this.topic, match?.[1] ? Number(match[1]) : -1, brokerMessage));
  }

  private checkOldestAck(): void {
    const oldest = this.pending.values().next();
    if (oldest.done) return;
    const waitedMs = Date.now() - oldest.value.sentAt;
    const { ackTimeoutMs } = this.limits;
    if (waitedMs >= this.moveSignMs && !oldest.value.signalled) {
      oldest.value.signalled = true;
      this.settings.onMoved?.(`${this.link.label}: a send unacknowledged for ${waitedMs} ms`);
    }
    if (waitedMs < ackTimeoutMs) return;
    const why = `no acknowledgement from the broker within ${ackTimeoutMs} ms`;
    this.settings.logger.warn({ link: this.link.label, pending: this.pending.size, waitedMs }, `${why}: reopening the producer`);
    this.reopen(why);
    this.settings.onMoved?.(`${this.link.label}: ${why}`);
  }

  private failPending(cause: TransportError): void {
    if (this.pending.size === 0) return;
    const waiters = [...this.pending.values()];
    this.pending.clear();
    const error =
      cause instanceof TransportClosedError
        ? cause
        : new UnacknowledgedSendError(
            `${this.link.label}: connection lost before the broker acknowledged the message ` +
              `(it may or may not have been published): ${cause.message}`,
            { cause },
          );
    for (const waiter of waiters) waiter.reject(error);
  }
}
