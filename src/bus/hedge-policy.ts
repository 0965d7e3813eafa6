/**
 * When one service's calls are hedged: the service's adaptive first-reply deadline (adaptive-deadline.ts), its
 * hedge budget (hedge-budget.ts), and where the outcome of each hedge is reported. One policy per service,
 * shared by every client of that service, so that all its calls teach it the service's latency.
 */
import { AdaptiveDeadline, DEFAULT_DEADLINE, type DeadlineSettings } from './adaptive-deadline.js';
import { HedgeBudget } from './hedge-budget.js';

export interface HedgeSettings extends DeadlineSettings {
  /** Hedges may be at most this share of the service's calls, in (0, 1]. */
  readonly budget: number;
}

export const DEFAULT_HEDGE: HedgeSettings = { ...DEFAULT_DEADLINE, budget: 0.1 };

/**
 * How an overdue call ended: `hedge_first` (the second request's reply came first: the first was lost or
 * slow), `original_first` (the first request's reply came first after all: the second was a wasted call),
 * `neither` (both failed), `over_budget` (overdue, but the budget allowed no second request).
 */
export type HedgeOutcome = 'hedge_first' | 'original_first' | 'neither' | 'over_budget';
export const HEDGE_OUTCOMES: readonly HedgeOutcome[] = ['hedge_first', 'original_first', 'neither', 'over_budget'];

export interface HedgeReport {
  outcome(outcome: HedgeOutcome): void;
  /** The deadline moved (seconds). */
  deadline?(seconds: number): void;
}

export class HedgePolicy {
  private readonly deadline: AdaptiveDeadline;
  private readonly budget: HedgeBudget;

  constructor(
    settings: HedgeSettings,
    private readonly report: HedgeReport = { outcome: () => undefined },
  ) {
    this.deadline = new AdaptiveDeadline(settings, (ms) => report.deadline?.(ms / 1000));
    this.budget = new HedgeBudget(settings.budget);
  }

  /** The current first-reply deadline, in ms. */
  get deadlineMs(): number {
    return this.deadline.ms;
  }

  /**
   * A call begins, whose own wait for its first reply is `timeoutMs`: when to send it once more (ms), or
   * undefined when that would not be before its own timeout.
   */
  begin(timeoutMs: number): number | undefined {
    this.budget.called();
    const ms = this.deadline.ms;
    return ms < timeoutMs ? ms : undefined;
  }

  /** A call's first reply came `ms` after its request went out. */
  firstReply(ms: number): void {
    this.deadline.observe(ms);
  }

  /** An overdue call asks to be sent once more: whether the budget allows it (if not, counted `over_budget`). */
  mayHedge(): boolean {
    if (this.budget.take()) return true;
    this.report.outcome('over_budget');
    return false;
  }

  /** A hedged call ended. */
  ended(outcome: Exclude<HedgeOutcome, 'over_budget'>): void {
    this.report.outcome(outcome);
  }
}
