/**
 * Retrying what needs the broker while it is not up yet (the agent may start first, as in any cluster start):
 * a bounded exponential backoff for as long as the broker takes, ended only by `signal` or by a failure that
 * trying again cannot help (a refused token, a bad topic name), which rejects with its own message.
 */
import { exponentialBackoff } from '../retry/backoff.js';
import { retry, type RetryEvent } from '../retry/retry.js';
import { TransportError } from './errors.js';

export interface UntilBrokerUpOptions {
  /** Aborting ends the wait at once; the promise then rejects with the latest failure. */
  signal: AbortSignal;
  onRetry?: (event: RetryEvent) => void;
  /** The longest wait between attempts. Default 5 s: the agent is serving within seconds of the broker. */
  maxDelayMs?: number;
}

export function untilBrokerUp<T>(step: () => Promise<T>, options: UntilBrokerUpOptions): Promise<T> {
  return retry(step, {
    backoff: exponentialBackoff({ initialMs: 500, maxMs: options.maxDelayMs ?? 5000, jitter: 'equal' }),
    retryIf: (error) => !(error instanceof TransportError && !error.retriable),
    signal: options.signal,
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
  });
}
