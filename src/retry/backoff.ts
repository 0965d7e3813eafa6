/**
 * How long to wait between attempts. A backoff maps the number of failures so far (1 after the first) to a
 * delay in milliseconds; every retrying path in the service takes one of these.
 */
export type Backoff = (failures: number) => number;

export interface ExponentialBackoffOptions {
  /** The delay after the first failure. */
  initialMs: number;
  /** The delay doubles on every further failure up to this. */
  maxMs: number;
  /**
   * `equal`: a random delay between half and all of the exponential one, so that many clients cut off at the
   * same moment (a broker restart) do not come back in step. `none` (default): exactly the exponential delay.
   */
  jitter?: 'equal' | 'none';
}

/** min(maxMs, initialMs · 2^(failures−1)), with the chosen jitter. */
export function exponentialBackoff({ initialMs, maxMs, jitter = 'none' }: ExponentialBackoffOptions): Backoff {
  return (failures) => {
    const ceiling = Math.min(maxMs, initialMs * 2 ** Math.min(Math.max(failures, 1) - 1, 30));
    return jitter === 'equal' ? Math.round(ceiling / 2 + Math.random() * (ceiling / 2)) : ceiling;
  };
}

/** The same delay after every failure. */
export function fixedBackoff(delayMs: number): Backoff {
  return () => delayMs;
}
