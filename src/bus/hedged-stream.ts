/**
 * A hedged request: one attempt is sent; if its first reply is overdue against the service's deadline
 * (hedge-policy.ts), a second attempt of the same request is sent beside it (a fresh id), and whichever first
 * reply comes first wins. The other attempt is abandoned at once: it stops listening, so a reply of it that
 * comes later is ignored, and a streamed answer is read from the winner alone, never mixed from two.
 *
 * An attempt that fails while the other still waits does not end the call; both failing does, with the first
 * attempt's error. The first attempt's timeout ends the call whatever the second is doing: a hedge makes a
 * call end sooner, never later.
 *
 * Every call pays for this, hedged or not, so the common path is lean: one timer, no AbortController.
 */
import { RequestTimeoutError } from './errors.js';
import type { HedgePolicy } from './hedge-policy.js';

/** How an attempt learns that it lost the race: it stops listening (a plain callback; an AbortSignal costs more). */
export class Abandonment {
  abandoned = false;
  private listener: (() => void) | undefined;

  /** `listener` runs once, when the attempt is abandoned. */
  onAbandon(listener: (() => void) | undefined): void {
    this.listener = listener;
  }

  abandon(): void {
    if (this.abandoned) return;
    this.abandoned = true;
    const listener = this.listener;
    this.listener = undefined;
    listener?.();
  }
}

/** Whether the service's calls wait for a slot now (call-slots.ts): then an overdue call is not sent once more. */
export type Crowded = () => boolean;

/** Starts one attempt: it publishes the request when first iterated, and stops listening when abandoned. */
export type StartAttempt<T> = (abandonment?: Abandonment) => AsyncGenerator<T, void, undefined>;

interface Attempt<T> {
  readonly generator: AsyncGenerator<T, void, undefined>;
  readonly abandonment: Abandonment;
  readonly startedAt: number;
  /** How its first step ended. */
  first: Promise<Step<T>>;
}

type Step<T> = { readonly attempt: Attempt<T> } & ({ readonly result: IteratorResult<T, void> } | { readonly error: unknown });

function launch<T>(start: StartAttempt<T>): Attempt<T> {
  const abandonment = new Abandonment();
  const attempt: Attempt<T> = { generator: start(abandonment), abandonment, startedAt: performance.now(), first: undefined! };
  attempt.first = attempt.generator.next().then(
    (result) => ({ attempt, result }),
    (error: unknown) => ({ attempt, error }),
  );
  return attempt;
}

function abandon<T>(attempt: Attempt<T>): void {
  attempt.abandonment.abandon();
  void attempt.generator.return(undefined).catch(() => undefined);
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
function firstStep<T>(start: StartAttempt<T>, policy: HedgePolicy, timeoutMs: number, crowded?: Crowded): Promise<Step<T>> {
  const deadlineMs = policy.begin(timeoutMs);
  const primary = launch(start);
  if (deadlineMs === undefined) return primary.first;
  return new Promise((resolve) => {
    let overdue = false;
    const timer = setTimeout(() => {
      overdue = true;
      // Calls to the service wait for a slot (call-slots.ts): it has all of ours it may take, so one more would
      // only wait behind them, and the call is late for want of a slot, not for a lost reply.
      if (crowded?.()) resolve(primary.first);
      else resolve(policy.mayHedge() ? raceAttempts(primary, start, policy) : primary.first);
    }, deadlineMs);
    void primary.first.then((step) => {
      if (overdue) return;
      clearTimeout(timer);
      resolve(step);
    });
  });
}

/** The winning attempt and its first reply; every first reply teaches the policy the service's latency. */
async function winner<T>(
  start: StartAttempt<T>,
  policy: HedgePolicy,
  timeoutMs: number,
  crowded?: Crowded,
): Promise<{ attempt: Attempt<T>; result: IteratorResult<T, void> }> {
  const step = await firstStep(start, policy, timeoutMs, crowded);
  if ('error' in step) throw step.error;
  if (!step.result.done) policy.firstReply(performance.now() - step.attempt.startedAt);
  return step;
}

/**
 * The replies of one try of a call: hedged by `policy` when there is one, unless `crowded` says the service's
 * calls wait for a slot when the first reply is overdue; `timeoutMs` is the call's own wait for its first reply.
 */
export async function* replies<T>(start: StartAttempt<T>, policy: HedgePolicy | undefined, timeoutMs: number, crowded?: Crowded): AsyncGenerator<T, void, undefined> {
  if (!policy) return yield* start();
  const { attempt, result } = await winner(start, policy, timeoutMs, crowded);
  if (result.done) return;
  try {
    yield result.value;
    yield* attempt.generator;
  } finally {
    // A caller that leaves after the first reply stops the winner listening too.
    await attempt.generator.return(undefined).catch(() => undefined);
  }
}

/** The one reply of a try whose every reply is its last (a request, not a stream), hedged as `replies` is. */
export async function firstReply<T>(start: StartAttempt<T>, policy: HedgePolicy | undefined, timeoutMs: number, crowded?: Crowded): Promise<T> {
  const { attempt, result } = policy ? await winner(start, policy, timeoutMs, crowded) : await launchFirst(start);
  void attempt.generator.return(undefined).catch(() => undefined);
  // Such a try yields its one reply before it ends, or throws.
  return result.value as T;
}

async function launchFirst<T>(start: StartAttempt<T>): Promise<{ attempt: { generator: AsyncGenerator<T, void, undefined> }; result: IteratorResult<T, void> }> {
  const generator = start();
  return { attempt: { generator }, result: await generator.next() };
}
