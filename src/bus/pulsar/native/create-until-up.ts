/**
 * Creating a C++ producer or consumer again (producer.ts, consumer.ts), for as long as the broker
 * is away: each attempt is bounded by a deadline of our own, and the attempts are spaced by a backoff of at most
 * 2 s (the client's own reconnect backoff, native-transport.ts).
 *
 * Why our own deadline: the C++ client gives up a creation after its operation timeout, so an attempt should
 * never outlast it; but a creation that never settles would leave its producer or consumer down for good, with
 * nothing to say so. One that settles after its deadline is closed at once.
 */
import type { Logger } from 'pino';
import { exponentialBackoff, retry } from '../../../retry/index.js';
import { TransportClosedError, TransportError } from '../../errors.js';

export interface CreateUntilUpOptions<T> {
  /** One attempt (the broker must answer). */
  create(): Promise<T>;
  /** Closes what an attempt created too late, or after `isClosed()` became true. */
  dispose(created: T): Promise<unknown>;
  /** How long one attempt may take: a little over the client's operation timeout. */
  attemptTimeoutMs: number;
  /** Aborted when the producer or consumer is closed by its owner: the attempts end at once. */
  signal: AbortSignal;
  /** Names it in errors and log lines, e.g. `producer for persistent://tg/flow/x`. */
  what: string;
  logger: Logger;
}

const BACKOFF = exponentialBackoff({ initialMs: 250, maxMs: 2000, jitter: 'equal' });

export function createUntilUp<T>(options: CreateUntilUpOptions<T>): Promise<T> {
  const { what, logger } = options;
  return retry(
    () => withinDeadline(options),
    {
      backoff: BACKOFF,
      signal: options.signal,
      retryIf: (error) => !(error instanceof TransportClosedError),
      // The first failure is worth a line; the ones after it repeat it every second or two while the broker is away.
      onRetry: ({ error, attempt }) => (attempt === 1 ? logger.warn : logger.debug).call(logger, { err: error, attempt }, `Could not create the ${what} again yet; retrying until the broker answers`),
    },
  );
}

/** One attempt, which fails at its deadline or when `signal` aborts; what it creates after that is closed. */
function withinDeadline<T>({ create, dispose, attemptTimeoutMs, signal, what, logger }: CreateUntilUpOptions<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let given = false;
    const giveUp = (error: Error): void => {
      given = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', closed);
      reject(error);
    };
    const closed = (): void => giveUp(new TransportClosedError(what));
    const timer = setTimeout(() => giveUp(new TransportError(`creating the ${what} did not finish within ${attemptTimeoutMs} ms`, { retriable: true })), attemptTimeoutMs);
    if (signal.aborted) return closed();
    signal.addEventListener('abort', closed, { once: true });
    create().then(
      (created) => {
        if (!given) {
          given = true;
          clearTimeout(timer);
          signal.removeEventListener('abort', closed);
          return resolve(created);
        }
        dispose(created).catch((err: unknown) => logger.debug({ err }, `closing a ${what} created after its attempt ended failed`));
      },
      (error: unknown) => {
        if (!given) giveUp(error instanceof Error ? error : new TransportError(String(error), { retriable: true }));
      },
    );
  });
}
