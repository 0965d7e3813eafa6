/**
 * Retrying what needs the broker while it is not up yet (the agent may start first, as in any cluster start):
 * a bounded exponential backoff for as long as the broker takes, ended only by `signal` or by a failure that
 * trying again cannot help (a refused token, a bad topic name), which rejects with its own message.
 *
 * A broker's port opens before its tenants and namespaces exist (TrustGraph's init creates them once the
 * broker answers), so "namespace / tenant / topic not found" is taken as "not ready yet" here, not as final.
 */
import { exponentialBackoff, retry, type RetryEvent } from '../retry/index.js';
import { ConnectError, TransportError } from './errors.js';

/** Whether `error` may go away by itself while the broker is coming up: a retriable one, or a topic or namespace not found. */
export function brokerMayBeComingUp(error: unknown): boolean {
  return !(error instanceof TransportError) || error.retriable || (error instanceof ConnectError && error.notFound);
}

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
    retryIf: brokerMayBeComingUp,
    signal: options.signal,
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
  });
}
