/**
 * Finds the native producers and consumers that stay disconnected while the broker answers the others, so that
 * the transport replaces them (producer.ts, consumer.ts).
 *
 * Why: the C++ client arms a creation timer for each producer and consumer, and when it fires before the first
 * connection it cancels the pending reconnection ("Cancel the pending reconnection due to the start timeout");
 * a handler can so end up never trying again, with nothing in the binding to say so, and the transport never
 * whole again. In libpulsar 4.2.0 (`HandlerBase::start`) the timer is armed after the first connection attempt is
 * started, and only that attempt's success, reported after the timer is armed, cancels it: a handler connected
 * before the timer is armed keeps it, and the timer then fires operation-timeout seconds later all the same and
 * cancels whatever reconnection is pending then (inferred from the code: the likeliest source of the warning a few
 * handlers log 10 s after every start). A healthy handler is back within a few seconds of the others: its reconnect backoff is at most
 * 2 s and its lookups at most 3.7 s apart (native-transport.ts). One still down `othersUpMs` after another came
 * back, and `stuckMs` after it went down, is taken as given up on. Replacing one that would have come back by
 * itself costs a subscription or a producer created anew, nothing more.
 */
export interface Watched {
  /** Names it in the transport's status and the log, e.g. `producer for persistent://tg/flow/x`. */
  readonly name: string;
  replace(): void;
}

export interface StuckWatchOptions {
  /** How long a handler must be down before it may be replaced (again). */
  stuckMs: number;
  /** How long another handler must have been connected: the broker answers. */
  othersUpMs: number;
}

export class StuckWatch {
  private readonly downSince = new Map<Watched, number>();
  /** Since when at least one handler has been connected; undefined while none is. */
  private someUpSince: number | undefined;

  constructor(private readonly options: StuckWatchOptions) {}

  /** One sample of every handler's state at `now` (ms); returns those to replace now. */
  sample(states: readonly (readonly [Watched, boolean])[], now: number): Watched[] {
    const { stuckMs, othersUpMs } = this.options;
    if (states.some(([, up]) => up)) this.someUpSince ??= now;
    else this.someUpSince = undefined;
    const brokerAnswers = this.someUpSince !== undefined && now - this.someUpSince >= othersUpMs;
    const stuck: Watched[] = [];
    const seen = new Set<Watched>();
    for (const [handler, up] of states) {
      seen.add(handler);
      if (up) {
        this.downSince.delete(handler);
        continue;
      }
      const since = this.downSince.get(handler) ?? now;
      if (brokerAnswers && now - since >= stuckMs) {
        stuck.push(handler);
        // Its replacement gets the same time to come up before it counts as stuck in turn.
        this.downSince.set(handler, now);
      } else {
        this.downSince.set(handler, since);
      }
    }
    for (const handler of this.downSince.keys()) if (!seen.has(handler)) this.downSince.delete(handler);
    return stuck;
  }
}
