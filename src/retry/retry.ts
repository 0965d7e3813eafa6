/**
 * Run an operation until it succeeds, waiting a backoff between attempts: the one retry loop of the service
 * for work the caller waits for (first connect of a WebSocket link, the initial config load, a publish).
 * Work that must retry in the background without holding its caller uses RetryTimer instead.
 */
import type { Backoff } from './backoff.js';

export interface RetryOptions {
  backoff: Backoff;
  /** Attempts in all, the first included. Default: no limit. */
  maxAttempts?: number;
  /** No attempt starts later than this after the first one started: the last wait is cut to end there. */
  maxElapsedMs?: number;
  /** Whether the failure of `attempt` is worth another attempt. Default: every failure is. */
  retryIf?: (error: unknown, attempt: number) => boolean;
  /** Called after a failed attempt that will be retried, before the wait. */
  onRetry?: (event: RetryEvent) => void;
  /** When aborted, the wait ends at once and `retry` rejects with the latest failure. */
  signal?: AbortSignal;
}

export interface RetryEvent {
  error: unknown;
  /** The attempt that failed (1 for the first). */
  attempt: number;
  /** The wait before the next attempt. */
  delayMs: number;
}

/** Resolves with the first successful attempt's result; rejects with the failure that ended the retries. */
export async function retry<T>(operation: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation(attempt);
    } catch (error) {
      if (options.signal?.aborted) throw error;
      if (options.retryIf && !options.retryIf(error, attempt)) throw error;
      if (options.maxAttempts !== undefined && attempt >= options.maxAttempts) throw error;
      let delayMs = options.backoff(attempt);
      if (options.maxElapsedMs !== undefined) {
        const left = started + options.maxElapsedMs - Date.now();
        if (left <= 0) throw error;
        delayMs = Math.min(delayMs, left);
      }
      options.onRetry?.({ error, attempt, delayMs });
      await wait(delayMs, options.signal);
      if (options.signal?.aborted) throw error;
    }
  }
}

/** Resolves after `ms`, or as soon as `signal` aborts. */
export function wait(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
