/**
 * Whether Loki takes our log lines: an empty push (`{"streams": []}`, which Loki answers 204) now and every
 * CHECK_INTERVAL_MS. The first failure logs one warning saying what to do; while Loki stays away nothing more
 * is logged (lines pushed meanwhile are dropped, see service-logger.ts); when it answers again, one line says so.
 */
import type { Logger } from 'pino';
import { errorMessage } from '../errors/error-text.js';
import { basicAuthorization, redactUrl, type BasicAuth } from '../errors/secret-text.js';

const CHECK_INTERVAL_MS = 30_000;
const CHECK_TIMEOUT_MS = 5_000;

export interface LokiReachabilityOptions {
  /** The push URL, without user-info. */
  url: string;
  /** The URL as logs show it. Default: the URL without user-info and query. */
  shownUrl?: string;
  basicAuth?: BasicAuth;
  logger: Logger;
  intervalMs?: number;
}

export class LokiReachability {
  private reachable: boolean | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastProblem: string | undefined;

  private readonly shownUrl: string;

  constructor(private readonly options: LokiReachabilityOptions) {
    this.shownUrl = options.shownUrl ?? redactUrl(options.url);
  }

  /** Undefined until the first check has answered. */
  get isReachable(): boolean | undefined {
    return this.reachable;
  }

  /** Why the latest check failed; undefined while Loki takes our lines. */
  get problem(): string | undefined {
    return this.lastProblem;
  }

  start(): void {
    void this.check();
    this.timer = setInterval(() => void this.check(), this.options.intervalMs ?? CHECK_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One check; resolves with the verdict. */
  async check(): Promise<boolean> {
    const problem = await this.push();
    const now = problem === undefined;
    if (!now && this.reachable !== false) {
      this.options.logger.warn(
        { url: this.shownUrl, problem },
        `Loki does not take our log lines (${problem}); logs go to stdout only, and lines for Loki are dropped ` +
          'until it does. Check --loki-url (LOKI_URL) and the credentials, or turn Loki off with --no-loki-enabled',
      );
    } else if (now && this.reachable === false) {
      this.options.logger.info({ url: this.shownUrl }, 'Loki takes our log lines again');
    }
    this.reachable = now;
    this.lastProblem = problem;
    return now;
  }

  private async push(): Promise<string | undefined> {
    const { basicAuth } = this.options;
    try {
      const response = await fetch(this.options.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(basicAuth ? { authorization: basicAuthorization(basicAuth) } : {}),
        },
        body: '{"streams":[]}',
        signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
      });
      await response.body?.cancel();
      return response.ok ? undefined : `HTTP ${response.status} ${response.statusText}`.trim();
    } catch (error) {
      const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
      return `${errorMessage(error)}${cause}`;
    }
  }
}
