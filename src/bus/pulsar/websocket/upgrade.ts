/**
 * One WebSocket upgrade to the broker's WebSocket API, and what a refused one means: the HTTP status and the
 * reason the broker gave, read from its error page.
 */
import WebSocket from 'ws';
import { isRetriableStatus } from '../../errors.js';
import { CodedError, errorMessage } from '../../../errors/index.js';

export interface UpgradeSettings {
  readonly token: string | undefined;
  readonly handshakeTimeoutMs: number;
}

/** The raw outcome of one failed upgrade; the link turns it into a ConnectError. */
export class UpgradeFailure extends CodedError {
  override readonly name = 'UpgradeFailure';
  readonly code = 'TG_WEBSOCKET_UPGRADE_FAILED';

  constructor(
    message: string,
    readonly status: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Any failure of an upgrade as an UpgradeFailure (a network error has no status). */
export function toFailure(err: unknown): UpgradeFailure {
  if (err instanceof UpgradeFailure) return err;
  const message = errorMessage(err);
  return new UpgradeFailure(message, undefined, { cause: err });
}

/** Whether trying the upgrade again may succeed. */
export function isRetriableFailure(failure: UpgradeFailure): boolean {
  return isRetriableStatus(failure.status);
}

function zeroMask(mask: Buffer): void {
  mask.fill(0);
}

/**
 * Opens one WebSocket; a refused or failed upgrade rejects with an UpgradeFailure. `opened` runs inside the
 * socket's `open` event, before the promise settles: frames that came in the same read as the upgrade's answer
 * (a consumer's backlog, pushed by the broker at once) are emitted on the next tick, before any `.then` of the
 * promise runs, so their listeners must be in place by then or those messages are lost.
 */
export function openWebSocket(
  url: string,
  settings: UpgradeSettings,
  /** Called with the socket once its listeners are set, so that a close meanwhile can terminate it. */
  track: (ws: WebSocket) => void,
  /** Called in the `open` event: attach the `message`, `close` and `error` listeners here. */
  opened: (ws: WebSocket) => void,
): Promise<WebSocket> {
  return new Promise<WebSocket>((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (settings.token) headers.Authorization = `Bearer ${settings.token}`;
    // No permessage-deflate (ws enables it by default on clients): compressing every small frame doubled the
    // agent's CPU per iteration (bench/iteration.ts, docs/benchmarks.md).
    // A zero masking key (RFC 6455 §5.3 lets the client pick any key): ws then writes each frame's text as it
    // is instead of copying it into a buffer and XOR-ing every byte in JavaScript. The mask protects proxies
    // from script-controlled bytes in browsers; this client's frames are its own JSON.
    const ws = new WebSocket(url, {
      headers,
      handshakeTimeout: settings.handshakeTimeoutMs,
      perMessageDeflate: false,
      generateMask: zeroMask,
    });
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
      opened(ws);
      resolve(ws);
    });
    ws.once('close', () => {
      if (status !== undefined) {
        reject(new UpgradeFailure(`HTTP ${status}${refusal ? ` ${refusal}` : ''}`, status));
      } else {
        reject(new UpgradeFailure(lastError?.message ?? 'connection closed during the upgrade', undefined, { cause: lastError }));
      }
    });
    track(ws);
  });
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
