/**
 * A hedged request: one attempt is sent; if its first reply is overdue against the service's deadline
 * (hedge-policy.ts), a second attempt of the same request is sent beside it (a fresh id), and whichever first
 * reply comes first wins. The other attempt is abandoned at once: it stops listening, so a reply of it that
 * comes later is ignored, and a streamed answer is read from the winner alone, never mixed from two.
 *
 * An attempt that fails while the other still waits does not end the call; both failing does, with the first
 * attempt's error. The first attempt's timeout ends the call whatever the second is doing: a hedge makes a
 * call end sooner, never later.
 */
import { RequestTimeoutError } from './errors.js';
import type { HedgePolicy } from './hedge-policy.js';

/** Starts one attempt: publishes the request when first iterated; stops listening when `signal` aborts. */
export type StartAttempt<T> = (signal: AbortSignal) => AsyncGenerator<T, void, undefined>;

interface Attempt<T> {
  readonly generator: AsyncGenerator<T, void, undefined>;
  readonly abort: AbortController;
  readonly startedAt: number;
  /** How its first step ended. */
  readonly first: Promise<Step<T>>;
}

type Step<T> = { readonly attempt: Attempt<T> } & ({ readonly result: IteratorResult<T, void> } | { readonly error: unknown });

function launch<T>(start: StartAttempt<T>): Attempt<T> {
  const abort = new AbortController();
  const generator = start(abort.signal);
  const attempt: { -readonly [K in keyof Attempt<T>]: Attempt<T>[K] } = { generator, abort, startedAt: performance.now(), first: undefined! };
  attempt.first = generator.next().then(
    (result) => ({ attempt, result }),
    (error: unknown) => ({ attempt, error }),
  );
  return attempt;
}

function abandon<T>(attempt: Attempt<T>): void {
  attempt.abort.abort();
  void attempt.generator.return(undefined).catch(() => undefined);
}

/** Resolves after `ms`, unless cancelled. */
function overdueAfter(ms: number): { readonly fired: Promise<'overdue'>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  const fired = new Promise<'overdue'>((resolve) => (timer = setTimeout(() => resolve('overdue'), ms)));
  return { fired, cancel: () => clearTimeout(timer) };
}

/** The attempts' first steps: the first one with a reply wins; see the header for failures. */
async function raceAttempts<T>(primary: Attempt<T>, start: StartAttempt<T>, policy: HedgePolicy): Promise<Step<T>> {
  const hedge = launch(start);
  const waiting = new Set([primary, hedge]);
  const errors = new Map<Attempt<T>, unknown>();
  while (waiting.size > 0) {
    const step = await Promise.race([...waiting].map((attempt) => attempt.first));
    waiting.delete(step.attempt);
    if ('result' in step) {
      for (const other of waiting) abandon(other);
      policy.ended(step.attempt === hedge ? 'hedge_first' : 'original_first');
      return step;
    }
    errors.set(step.attempt, step.error);
    if (step.attempt === primary && step.error instanceof RequestTimeoutError) break;
  }
  for (const other of waiting) abandon(other);
  policy.ended('neither');
  return { attempt: primary, error: errors.get(primary) ?? errors.get(hedge) };
}

/** The first step of the call: the first attempt's, or the race's when it is overdue and the budget allows. */
async function firstStep<T>(start: StartAttempt<T>, policy: HedgePolicy, timeoutMs: number): Promise<Step<T>> {
  const deadlineMs = policy.begin(timeoutMs);
  const primary = launch(start);
  if (deadlineMs === undefined) return primary.first;
  const overdue = overdueAfter(deadlineMs);
  const early = await Promise.race([primary.first, overdue.fired]);
  overdue.cancel();
  if (early !== 'overdue' || !policy.mayHedge()) return primary.first;
  return raceAttempts(primary, start, policy);
}

/**
 * The replies of a call that is hedged by `policy`; `timeoutMs` is the call's own wait for its first reply.
 * Every first reply teaches the policy the service's latency.
 */
export async function* hedgedStream<T>(start: StartAttempt<T>, policy: HedgePolicy, timeoutMs: number): AsyncGenerator<T, void, undefined> {
  const step = await firstStep(start, policy, timeoutMs);
  if ('error' in step) throw step.error;
  const { attempt, result } = step;
  if (result.done) return;
  policy.firstReply(performance.now() - attempt.startedAt);
  try {
    yield result.value;
    yield* attempt.generator;
  } finally {
    // A caller that leaves after the first reply stops the winner listening too.
    await attempt.generator.return(undefined).catch(() => undefined);
  }
}
