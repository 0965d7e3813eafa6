/**
 * The signatures one replica has accepted (its own and, through the ledger, every other replica's), each until it
 * expires (its signing time plus the age limit), to refuse a second copy of a genuine `next` message.
 *
 * Bounded by time and by count. Nothing expired is ever stored, and every entry expires within the age limit (the
 * callers check what they hand over), so the memory holds at most what was accepted in the last `--signing-max-age`.
 * Past `capacity` entries the oldest is pushed out, and the memory then fails closed: a signature expiring no later
 * than one pushed out is taken as seen (`forgottenUntil`), since it may be one of those forgotten. Flooding the
 * memory therefore never makes a replay new again; at worst a genuine `next` older than the last `capacity`
 * accepted ones is refused as a replay.
 */
export class SeenSignatures {
  /** Signature → expiry (ms since the epoch), in the order they were accepted. */
  private readonly entries = new Map<string, number>();
  /** The latest expiry among live entries pushed out by the count bound: nothing expiring earlier is new. */
  private forgottenUntil = 0;

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** Whether live entries were pushed out by the count bound (then older signatures are taken as seen). */
  get forgetting(): boolean {
    return this.forgottenUntil > 0;
  }

  /**
   * False when `signature` was accepted before and has not expired, or may have been and was pushed out; otherwise
   * remember it and return true. A signature already expired at `now` is not stored (and is not new: false).
   */
  remember(signature: string, expiresAt: number, now: number): boolean {
    this.dropExpired(now);
    if (expiresAt <= now || expiresAt <= this.forgottenUntil || this.entries.has(signature)) return false;
    this.entries.set(signature, expiresAt);
    while (this.entries.size > this.capacity) {
      const [oldest, expiry] = this.entries.entries().next().value as [string, number];
      this.entries.delete(oldest);
      if (expiry > this.forgottenUntil) this.forgottenUntil = expiry;
    }
    return true;
  }

  /**
   * Entries are kept in the order they came, and each expires within the age limit of its arrival, so the expired
   * ones are at the front (within the clock margin).
   */
  private dropExpired(now: number): void {
    for (const [oldest, expiry] of this.entries) {
      if (expiry > now) break;
      this.entries.delete(oldest);
    }
    if (this.forgottenUntil <= now) this.forgottenUntil = 0;
  }
}
