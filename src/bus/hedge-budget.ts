/**
 * How many hedges a service may be sent: at most `ratio` of its calls, and at most `burst` in a row (a token
 * bucket that each call fills by `ratio` and each hedge empties by one; it starts full). When a service slows
 * down as a whole, every call in flight is overdue at once; without a budget each would be sent twice, and the
 * service, already slow, would get twice the work. With it, the calls over budget wait for their own timeout.
 */
import { InvalidUseError } from '../errors/index.js';

/** Hedges allowed in a row before calls have to earn more. */
export const DEFAULT_BURST = 10;

export class HedgeBudget {
  private tokens: number;

  constructor(
    private readonly ratio: number,
    private readonly burst = DEFAULT_BURST,
  ) {
    if (!(ratio > 0 && ratio <= 1)) throw new InvalidUseError(`the hedge budget must be in (0, 1], got ${ratio}`);
    if (!(burst >= 1) || !Number.isFinite(burst)) throw new InvalidUseError(`the hedge burst must be a finite number of at least 1, got ${burst}`);
    this.tokens = burst;
  }

  /** A call was made. */
  called(): void {
    this.tokens = Math.min(this.burst, this.tokens + this.ratio);
  }

  /** Takes one hedge from the budget; false when there is none left. */
  take(): boolean {
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
