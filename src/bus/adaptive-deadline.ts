/**
 * How long a call to a service waits for its first reply before it is sent once more (a hedged request): a
 * quantile of the service's recent first-reply latencies times a factor, kept between a floor and a ceiling.
 * Until `MIN_SAMPLES` replies have been seen the ceiling applies, since nothing is known of the service yet.
 *
 *   p99 of the last 256 first replies × 2, at least 2 s, at most 60 s     (the defaults)
 *
 * The quantile is recomputed every `RECOMPUTE_EVERY` replies, not on every call: sorting the window on each
 * call would cost more than the call.
 */
import { InvalidUseError } from '../errors/index.js';

export interface DeadlineSettings {
  /** The quantile of recent first-reply latencies, in (0, 1]. */
  readonly quantile: number;
  /** What the quantile is multiplied by, at least 1. */
  readonly factor: number;
  /** The shortest deadline, in ms. */
  readonly floorMs: number;
  /** The longest deadline, in ms; also the deadline until enough replies have been seen. */
  readonly ceilingMs: number;
}

export const DEFAULT_DEADLINE: DeadlineSettings = { quantile: 0.99, factor: 2, floorMs: 2_000, ceilingMs: 60_000 };

/** First-reply latencies kept: the most recent ones. */
export const WINDOW = 256;
/** Replies seen before the quantile is trusted. */
export const MIN_SAMPLES = 20;
/** Replies between two computations of the quantile. */
export const RECOMPUTE_EVERY = 16;

export class AdaptiveDeadline {
  private readonly samples = new Float64Array(WINDOW);
  private count = 0;
  private next = 0;
  private sinceComputed = 0;
  private computed = false;
  private current: number;

  /** `changed` is told the deadline (ms) whenever a computation moves it. */
  constructor(
    private readonly settings: DeadlineSettings,
    private readonly changed?: (ms: number) => void,
  ) {
    const { quantile, factor, floorMs, ceilingMs } = settings;
    if (!(quantile > 0 && quantile <= 1)) throw new InvalidUseError(`quantile must be in (0, 1], got ${quantile}`);
    if (!(factor >= 1) || !Number.isFinite(factor)) throw new InvalidUseError(`factor must be a finite number of at least 1, got ${factor}`);
    if (!(floorMs > 0) || !(ceilingMs >= floorMs) || !Number.isFinite(ceilingMs)) {
      throw new InvalidUseError(`the floor must be greater than 0 and the ceiling finite and at least the floor, got ${floorMs} and ${ceilingMs} ms`);
    }
    this.current = ceilingMs;
  }

  /** The wait for the first reply before a hedge, in ms. */
  get ms(): number {
    return this.current;
  }

  /** A first reply came `ms` after its request was sent. */
  observe(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    this.samples[this.next] = ms;
    this.next = (this.next + 1) % WINDOW;
    this.count = Math.min(this.count + 1, WINDOW);
    this.sinceComputed++;
    if (this.count < MIN_SAMPLES || (this.computed && this.sinceComputed < RECOMPUTE_EVERY)) return;
    this.recompute();
  }

  private recompute(): void {
    const sorted = this.samples.slice(0, this.count).sort();
    // Nearest rank: the smallest latency at or above which lies the quantile's share of the window.
    const rank = Math.min(this.count, Math.max(1, Math.ceil(this.settings.quantile * this.count)));
    const { factor, floorMs, ceilingMs } = this.settings;
    const deadline = Math.min(ceilingMs, Math.max(floorMs, sorted[rank - 1]! * factor));
    this.computed = true;
    this.sinceComputed = 0;
    if (deadline === this.current) return;
    this.current = deadline;
    this.changed?.(deadline);
  }
}
