import { createHash } from 'node:crypto';

/** What the memory can say of a signature handed to `remember`. */
export type Remembered =
  /** Not seen before: now remembered. */
  | 'new'
  /** Accepted before and not expired, or already expired (a copy, or nothing to remember). */
  | 'seen'
  /** Perhaps accepted before: live entries as old as it were pushed out by the count bound, so it cannot tell. */
  | 'forgotten';

/**
 * The signatures one replica has accepted (its own and, through the ledger, every other replica's), each until it
 * expires (its signing time plus the age limit), to refuse a second copy of a genuine `next` message.
 *
 * Bounded by time and by count. Nothing expired is ever stored, and every entry expires within the age limit (the
 * callers check what they hand over), so the memory holds at most what was accepted in the last `--signing-max-age`.
 * Past `capacity` entries the oldest is pushed out, and the memory then fails closed: a signature expiring no later
 * than one pushed out is `forgotten` (it may be one of those pushed out), never `new`. Flooding the memory therefore
 * never makes a replay new again.
 *
 * Each entry is about 60 bytes (measured at 1 000 000: a 16-byte digest of the signature as a one-byte string and
 * its expiry in whole seconds, a small integer), so the default million costs about 60 MiB when full.
 */
export class SeenSignatures {
  /** Digest of the signature → expiry (whole seconds since `epochSeconds`, rounded up), in the order accepted. */
  private readonly entries = new Map<string, number>();
  /** The latest expiry (ms) among live entries pushed out by the count bound: nothing expiring earlier is new. */
  private forgottenUntil = 0;
  /** Expiries are kept relative to this, so that they stay small integers however long the process runs. */
  private readonly epochSeconds: number;

  constructor(
    readonly capacity: number,
    now: number = Date.now(),
  ) {
    this.epochSeconds = Math.floor(now / 1000);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Whether live entries were pushed out by the count bound (then older signatures are `forgotten`). */
  get forgetting(): boolean {
    return this.forgottenUntil > 0;
  }

  /**
   * `seen` when `signature` was accepted before and has not expired, or has already expired at `now` (it is not
   * stored); `forgotten` when it may have been accepted and pushed out; otherwise remembers it: `new`.
   */
  remember(signature: string, expiresAt: number, now: number): Remembered {
    this.dropExpired(now);
    const key = digest(signature);
    if (expiresAt <= now || this.entries.has(key)) return 'seen';
    if (expiresAt <= this.forgottenUntil) return 'forgotten';
    this.entries.set(key, Math.ceil(expiresAt / 1000) - this.epochSeconds);
    while (this.entries.size > this.capacity) {
      const [oldest, expiry] = this.entries.entries().next().value as [string, number];
      this.entries.delete(oldest);
      const expiryMs = (expiry + this.epochSeconds) * 1000;
      if (expiryMs > this.forgottenUntil) this.forgottenUntil = expiryMs;
    }
    return 'new';
  }

  /**
   * Entries are kept in the order they came, and each expires within the age limit of its arrival, so the expired
   * ones are at the front (within the clock margin).
   */
  private dropExpired(now: number): void {
    const nowSeconds = now / 1000 - this.epochSeconds;
    for (const [oldest, expiry] of this.entries) {
      if (expiry > nowSeconds) break;
      this.entries.delete(oldest);
    }
    if (this.forgottenUntil <= now) this.forgottenUntil = 0;
  }
}

/** 128 bits of the signature's SHA-256: collisions are out of reach at any capacity, and it costs 16 bytes. */
function digest(signature: string): string {
  return createHash('sha256').update(signature).digest().subarray(0, 16).toString('latin1');
}
