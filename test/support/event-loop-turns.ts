/**
 * Waiting on the in-process bus without timers (a test's clock may be fake): turns of the event loop until
 * something holds, and a promise's outcome readable at any moment.
 */

/** Lets the in-process bus deliver whatever is in flight: `count` turns of the event loop, no timers. */
export async function turns(count = 200): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Waits, turn by turn of the event loop, until `done` holds. */
export async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setImmediate(resolve));
}

export interface Settled<T> {
  value?: T;
  error?: unknown;
  done: boolean;
}

/** The outcome of `promise`, filled in when it settles. */
export function settle<T>(promise: Promise<T>): Settled<T> {
  const state: Settled<T> = { done: false };
  promise.then(
    (value) => Object.assign(state, { value, done: true }),
    (error: unknown) => Object.assign(state, { error, done: true }),
  );
  return state;
}
