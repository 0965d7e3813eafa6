/** Bounds how many iterations run at once across every flow (`--concurrency`, TrustGraph's default 1). */
export class ConcurrencyLimit {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  private waitingBytes = 0;
  /** When each running task took its slot. */
  private readonly heldSince = new Set<{ since: number }>();

  constructor(
    readonly limit: number,
    private readonly clock: () => number = Date.now,
  ) {
    if (!Number.isInteger(limit) || limit < 1) throw new TypeError(`concurrency must be an integer >= 1, got ${limit}`);
  }

  get inFlight(): number {
    return this.active;
  }

  /** Tasks waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /** What the tasks waiting for a slot hold in memory, as each declared it (its request's bytes). */
  get queuedBytes(): number {
    return this.waitingBytes;
  }

  /** Whether a task started now would wait for a slot. */
  get full(): boolean {
    return this.active >= this.limit;
  }

  /**
   * How long every slot has been held: the time since the most recent of the running tasks took its slot,
   * when all slots are taken; 0 when a slot is free.
   */
  allHeldForMs(now = this.clock()): number {
    if (this.active < this.limit || this.heldSince.size === 0) return 0;
    let newest = 0;
    for (const { since } of this.heldSince) newest = Math.max(newest, since);
    return Math.max(0, now - newest);
  }

  /** Run `task` in a slot, waiting for one first; `bytes`: what it holds while it waits (counted in `queuedBytes`). */
  async run<T>(task: () => Promise<T>, bytes = 0): Promise<T> {
    if (this.active >= this.limit) {
      this.waitingBytes += bytes;
      try {
        await new Promise<void>((resolve) => this.waiting.push(resolve));
      } finally {
        this.waitingBytes -= bytes;
      }
    }
    this.active++;
    const slot = { since: this.clock() };
    this.heldSince.add(slot);
    try {
      return await task();
    } finally {
      this.heldSince.delete(slot);
      this.active--;
      this.waiting.shift()?.();
    }
  }

  /** Resolves when nothing is running (used on shutdown). */
  async idle(pollMs = 20): Promise<void> {
    while (this.active > 0 || this.waiting.length > 0) await new Promise((r) => setTimeout(r, pollMs));
  }
}
