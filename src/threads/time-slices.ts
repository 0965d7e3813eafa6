/**
 * Long synchronous work (building a registry of 10 000 tools, taking in a config answer of 10 000 entries)
 * written once, run two ways: to the end in one go, or in slices bounded by time, with the event loop free in
 * between, so requests, timers and broker messages never wait behind the whole of it.
 *
 * The work is a generator that yields wherever it may pause; it returns its result. Nothing it builds is
 * visible to anyone until it returns, so pausing never exposes half a result. A slice ends at the first
 * yield after its time budget is spent, so the work between two yields must stay small (a few hundred
 * microseconds at most: one tool loaded, or `CHEAP_ITEMS_PER_STEP` map inserts).
 */
import { nextMacrotask } from './next-macrotask.js';

export type Steps<T> = Generator<void, T, void>;

/**
 * Default time budget of one slice, ms. The bound is 50 ms for any block of the event loop; on a loaded
 * machine a slice's thread can be preempted for as long as it runs, and a garbage collection can land on
 * top of it, so a slice takes a tenth of the bound.
 */
export const DEFAULT_SLICE_MS = 4;

/** Items of a cheap pass (a copy, a map insert, a comparison) between two yields: ~10–50 µs of work. */
export const CHEAP_ITEMS_PER_STEP = 64;

/** Run every step now, in this macrotask. */
export function runToEnd<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * Run the steps in slices of about `sliceMs` each, every slice in a macrotask of its own (the first one too:
 * the caller's macrotask has usually done work already). The clock is read at every yield (tens of
 * nanoseconds; a step is microseconds at least). A step that throws rejects the promise.
 */
export async function runInSlices<T>(steps: Steps<T>, sliceMs = DEFAULT_SLICE_MS): Promise<T> {
  for (;;) {
    await nextMacrotask();
    const until = performance.now() + sliceMs;
    for (;;) {
      const step = steps.next();
      if (step.done) return step.value;
      if (performance.now() >= until) break;
    }
  }
}

/**
 * The steps while `current()` holds, checked before each step: once it turns false (a newer run of the same
 * work has started), no further step runs, the steps' `finally` blocks run, and the result is `undefined`.
 */
export function* whileCurrent<T>(steps: Steps<T>, current: () => boolean): Steps<T | undefined> {
  for (;;) {
    if (!current()) {
      steps.return(undefined as T);
      return undefined;
    }
    const step = steps.next();
    if (step.done) return step.value;
    yield;
  }
}
