/**
 * The signatures one replica has accepted, each until it expires (its signing time plus the age limit),
 * to refuse a second copy of a genuine `next` message. Bounded: past `capacity` entries the oldest is
 * dropped, so a replay older than the last `capacity` accepted iterations is not caught here (it is still
 * refused once it is older than the age limit).
 */
export class SeenSignatures {
  /** Signature → expiry (ms since the epoch), in the order they were accepted. */
  private readonly entries = new Map<string, number>();

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** False when `signature` was accepted before and has not expired; otherwise remember it and return true. */
  remember(signature: string, expiresAt: number, now: number): boolean {
    for (const [oldest, expiry] of this.entries) {
      if (expiry > now) break;
      this.entries.delete(oldest);
    }
    const expiry = this.entries.get(signature);
    if (expiry !== undefined && expiry > now) return false;
    this.entries.set(signature, expiresAt);
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
    return true;
  }
}
