/** The one retry helper of the service: `retry` with its backoffs, and `RetryTimer` for a retry that waits on a timer. */
export { type Backoff, exponentialBackoff, fixedBackoff } from './backoff.js';
export { RetryTimer } from './retry-timer.js';
export { retry, type RetryEvent, type RetryOptions } from './retry.js';
