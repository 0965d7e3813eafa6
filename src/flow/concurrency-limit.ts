/** Bounds how many iterations run at once across every flow (`--concurrency`, TrustGraph's default 1). */
export class ConcurrencyLimit {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new TypeError(`concurrency must be an integer >= 1, got ${limit}`);
  }

  get inFlight(): number {
    return this.active;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await task();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }

  /** Resolves when nothing is running (used on shutdown). */
  async idle(pollMs = 20): Promise<void> {
    while (this.active > 0 || this.waiting.length > 0) await new Promise((r) => setTimeout(r, pollMs));
  }
}
