/**
 * One WebSocket to the broker that reconnects: the first connect is bounded (`connectAttempts`), later
 * reconnects retry with exponential backoff and jitter until `close()`. It pings the broker to keep the session
 * alive and drops a socket whose peer stopped answering. The producer and consumer each own one.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import WebSocket from 'ws';
import { ConnectError, NotConnectedError, TransportClosedError, TransportError } from '../../errors.js';
import { type Backoff, exponentialBackoff, retry, RetryTimer } from '../../../retry/index.js';
import { isRetriableFailure, openWebSocket, toFailure, type UpgradeSettings } from './upgrade.js';
import type { HealTarget } from './socket-heal.js';
import type { PublishLink } from '../../connection-status.js';

export interface LinkSettings extends UpgradeSettings {
  readonly logger: Logger;
  readonly pingIntervalMs: number;
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  readonly connectAttempts: number;
  /**
   * A link changed state; `lost` when an open connection dropped, `reopened` when it was dropped on purpose (`reopen`).
   */
  readonly onLinkChange: (lost?: string, reopened?: boolean) => void;
  /** Something suggests a topic moved behind an open socket (a send left unacknowledged): socket-heal.ts. */
  readonly onMoved?: (why: string) => void;
  /**
   * Before a producer writes a send: what to wait for first (socket-heal.ts: after a move, the check that the broker
   * has a producer behind a socket idle through it); undefined: nothing.
   */
  readonly beforeSend?: (producer: HealTarget) => Promise<void> | undefined;
  /** The broker acknowledged a send on `topic` (socket-heal.ts). */
  readonly onSent?: (topic: string) => void;
  /** A consumer of `topic` was given a message (socket-heal.ts). */
  readonly onDelivered?: (topic: string) => void;
  /**
   * Resolves when a publish may go out (connection-status.ts: the settle after a reconnect): the `links` it needs up
   * and settled where the transport checks for subscribers, the whole transport otherwise.
   */
  readonly settled: (maxWaitMs: number, topic: string | undefined, links: readonly PublishLink[]) => Promise<boolean>;
}

export interface LinkHandlers {
  onOpen(ws: WebSocket): void;
  /** Each text frame, as a string; or, with `onTextBytes`, as the bytes received (decoding them is the handler's). */
  onText?(text: string): void;
  onTextBytes?(bytes: Buffer): void;
  /** The open connection was lost; a reconnect is scheduled unless the link is closed. */
  onDown(error: TransportError): void;
}

type LinkState = 'idle' | 'connecting' | 'open' | 'reconnecting' | 'closed';

export class Link implements PublishLink {
  private state: LinkState = 'idle';
  private socket: WebSocket | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private missedPongs = 0;
  private lastError: string | undefined;
  private openWaiters = new Set<{ resolve: (ws: WebSocket) => void; reject: (err: Error) => void }>();
  /** Aborted by close(): ends the first connect's wait between attempts. */
  private readonly closing = new AbortController();
  private readonly backoff: Backoff;
  /** Reconnects after an open connection dropped: forever, until close(). */
  private readonly reconnects: RetryTimer;
  private closedPromise: Promise<void> | undefined;
  /** performance.now() when the current socket opened. */
  private openedAt = 0;
  /** performance.now() when a socket opened after an earlier one had closed; -Infinity: not yet. */
  private backAt = -Infinity;
  /** The socket is being dropped by `reopen`. */
  private reopening = false;
  /** performance.now() of the last frame received on the current socket. */
  private lastFrameAt = -Infinity;
  private readonly namePrefix = `tg-agent-${randomBytes(6).toString('hex')}`;
  private sockets = 0;
  private socketNameNow = '';

  constructor(
    /** e.g. `producer for persistent://...` */
    readonly label: string,
    /**
     * The URL for each connect, from a name of the socket's own (`tg-agent-<random>-<n>`), under which the broker's
     * stats list the client behind it (socket-heal.ts).
     */
    private readonly url: (socketName: string) => string,
    private readonly settings: LinkSettings,
    private readonly handlers: LinkHandlers,
  ) {
    this.backoff = exponentialBackoff({ initialMs: settings.initialDelayMs, maxMs: settings.maxDelayMs, jitter: 'equal' });
    this.reconnects = new RetryTimer(this.backoff, { keepAlive: true });
  }

  /** As a publish waiting for it names it (connection-status.ts). */
  get name(): string {
    return this.label;
  }

  /** Whether a socket is open now (connection-status.ts: a publish waits for the links it needs). */
  up(): boolean {
    return this.current !== undefined;
  }

  /** When a socket opened again after the one before it closed (-Infinity: none closed yet). */
  restoredAt(): number {
    return this.backAt;
  }

  isClosed(): boolean {
    return this.state === 'closed';
  }

  /** The open socket; undefined while there is none, or while it closes (`reopen`: a write would fail). */
  get current(): WebSocket | undefined {
    return this.state === 'open' && this.socket?.readyState === WebSocket.OPEN ? this.socket : undefined;
  }

  /** First connect: bounded attempts; a non-retriable refusal fails at once. */
  async start(): Promise<void> {
    this.state = 'connecting';
    this.settings.onLinkChange();
    const { connectAttempts, logger } = this.settings;
    let attempts = 0;
    try {
      await retry(
        (attempt) => {
          attempts = attempt;
          return this.connectOnce().catch((err: unknown) => {
            this.lastError = toFailure(err).message;
            throw err;
          });
        },
        {
          backoff: this.backoff,
          maxAttempts: connectAttempts,
          retryIf: (err) => !this.isClosed() && isRetriableFailure(toFailure(err)),
          onRetry: ({ attempt, delayMs }) =>
            logger.warn({ link: this.label, attempt, delayMs, err: this.lastError }, 'connect failed, retrying'),
          signal: this.closing.signal,
        },
      );
    } catch (err) {
      if (this.isClosed()) throw new TransportClosedError(this.label);
      const failure = toFailure(err);
      const retriable = isRetriableFailure(failure);
      this.state = 'closed';
      this.settings.onLinkChange();
      throw new ConnectError(
        `cannot create ${this.label} at ${redact(this.lastUrl)}` +
          (retriable ? ` after ${attempts} attempts` : ' (not retriable)') +
          `: ${failure.message}`,
        redact(this.lastUrl),
        failure.status,
        { cause: err, retriable },
      );
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
        return `${this.label}: reconnecting (attempt ${this.reconnects.attempt}${this.lastError ? `, last error: ${this.lastError}` : ''})`;
      default:
        return `${this.label}: connecting`;
    }
  }

  /** How long the current socket has been open; undefined while none is. */
  openForMs(): number | undefined {
    return this.state === 'open' ? performance.now() - this.openedAt : undefined;
  }

  /** The name the current (or last) socket was opened under. */
  get socketName(): string {
    return this.socketNameNow;
  }

  /** performance.now() of the last frame the broker sent on the current socket; -Infinity: none. */
  heardAt(): number {
    return this.lastFrameAt;
  }

  /** Drops an open socket so that the link reconnects (a new session at the broker), as if the connection was lost. */
  reopen(why: string): void {
    if (this.state !== 'open' || !this.socket) return;
    this.lastError = why;
    this.reopening = true;
    this.socket.terminate();
  }

  /** Closes the socket and stops reconnecting; `beforeClose` may send a last frame on the open socket. */
  close(beforeClose?: (ws: WebSocket) => void): Promise<void> {
    if (this.closedPromise) return this.closedPromise;
    const ws = this.socket;
    const wasOpen = this.state === 'open';
    this.state = 'closed';
    this.reconnects.stop();
    this.stopPing();
    this.closing.abort();
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

  /** The URL of the last upgrade, for errors. */
  private lastUrl = '';

  /** One upgrade; on success the socket is attached (in its `open` event, see openWebSocket). */
  private connectOnce(): Promise<WebSocket> {
    this.socketNameNow = `${this.namePrefix}-${++this.sockets}`;
    this.lastUrl = this.url(this.socketNameNow);
    return openWebSocket(
      this.lastUrl,
      this.settings,
      (ws) => {
        this.socket = ws;
        if (this.state === 'closed') ws.terminate();
      },
      (ws) => this.attach(ws),
    );
  }

  private attach(ws: WebSocket): void {
    if (this.state === 'closed') {
      ws.terminate();
      return;
    }
    const { logger } = this.settings;
    if (this.openedAt > 0) this.backAt = performance.now();
    this.state = 'open';
    this.socket = ws;
    this.openedAt = performance.now();
    this.lastFrameAt = -Infinity;
    this.reconnects.succeeded();
    this.lastError = undefined;
    ws.removeAllListeners('error');
    ws.on('error', (err) => {
      this.lastError = err.message;
      logger.warn({ link: this.label, err: err.message }, 'websocket error');
    });
    ws.on('message', (data, isBinary) => {
      this.missedPongs = 0;
      this.lastFrameAt = performance.now();
      if (isBinary) {
        logger.warn({ link: this.label }, 'ignoring a binary frame');
        return;
      }
      if (this.handlers.onTextBytes) this.handlers.onTextBytes(rawToBuffer(data));
      else this.handlers.onText?.(rawToBuffer(data).toString('utf8'));
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
    const reopened = this.reopening;
    this.reopening = false;
    if (this.state === 'closed') return;
    const why = `connection closed (code ${code}${reason ? `, ${reason}` : ''})`;
    this.lastError = why;
    this.state = 'reconnecting';
    this.settings.logger.warn({ link: this.label, code, reason }, 'websocket closed, reconnecting');
    this.handlers.onDown(new TransportError(`${this.label}: ${why}`, { retriable: true }));
    this.settings.onLinkChange(`${this.label}: ${why}`, reopened);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.state === 'closed') return;
    this.reconnects.retryLater(() => {
      if (this.state === 'closed') return;
      const attempt = this.reconnects.attempt;
      this.connectOnce().then(
        () => this.settings.logger.info({ link: this.label, attempt }, 'reconnected'),
        (err: unknown) => {
          const failure = toFailure(err);
          this.lastError = failure.message;
          // A broker away for minutes must not flood the log: warn on the first attempts and every tenth.
          const level = attempt <= 3 || attempt % 10 === 0 ? 'warn' : 'debug';
          this.settings.logger[level](
            { link: this.label, attempt, status: failure.status, err: failure.message },
            'reconnect failed',
          );
          this.scheduleReconnect();
        },
      );
    });
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
}

function rawToBuffer(data: WebSocket.RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/** Never log a token that somebody put in the URL. */
function redact(url: string): string {
  return url.replace(/([?&]token=)[^&]*/g, '$1***');
}
