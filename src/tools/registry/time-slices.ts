/**
 * Long synchronous work (building a registry of 10 000 tools) written once, run two ways: to the end in one
 * go, or in slices of a few milliseconds with the event loop free in between, so requests, timers and broker
 * messages never wait behind the whole of it.
 *
 * The work is a generator that yields wherever it may pause; it returns its result. Nothing it builds is
 * visible to anyone until it returns, so pausing never exposes half a result.
 */
export type Steps<T> = Generator<void, T, void>;

/** Default time budget of one slice, ms: well under the 50 ms an event-loop block may take at most. */
export const DEFAULT_SLICE_MS = 8;

/** Steps run between two looks at the clock (each step is microseconds; the clock costs as much as one). */
const STEPS_PER_CLOCK_READ = 16;

/** Run every step now, in this macrotask. */
export function runToEnd<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * Run the steps in slices of about `sliceMs` each, every slice in a macrotask of its own (the first one too:
 * the caller's macrotask has usually done work already). A step that throws rejects the promise.
 */
export async function runInSlices<T>(steps: Steps<T>, sliceMs = DEFAULT_SLICE_MS): Promise<T> {
  for (;;) {
    await nextMacrotask();
    const until = performance.now() + sliceMs;
    for (let n = 1; ; n++) {
      const step = steps.next();
      if (step.done) return step.value;
      if (n % STEPS_PER_CLOCK_READ === 0 && performance.now() >= until) break;
    }
  }
}

/** Resolves in a macrotask of its own. */
export function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
