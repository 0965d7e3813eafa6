/**
 * Retries in the background: after a failure, run a task again once the backoff has passed, without holding
 * whoever noticed the failure. At most one retry is scheduled at a time; a success starts the backoff over.
 * Used where the retried work goes through a queue that must keep moving meanwhile (config resync and
 * changed-config fetches, flows that failed to start) and for a WebSocket link's reconnects.
 */
import type { Backoff } from './backoff.js';

export class RetryTimer {
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private stopped = false;

  constructor(
    private readonly backoff: Backoff,
    /** Whether a scheduled retry keeps the process alive. Default false (the timer is unref'd). */
    private readonly options: { keepAlive?: boolean } = {},
  ) {}

  /** The number of the retry scheduled or running since the last success (0: none yet). */
  get attempt(): number {
    return this.failures;
  }

  /** Whether a retry is waiting for its time. */
  get scheduled(): boolean {
    return this.timer !== undefined;
  }

  /**
   * After a failure: run `task` once the next delay has passed. Returns that delay, or undefined when a retry
   * is already scheduled (it will do) or the timer is stopped.
   */
  retryLater(task: () => void): number | undefined {
    if (this.stopped || this.timer) return undefined;
    this.failures += 1;
    const delayMs = this.backoff(this.failures);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.stopped) task();
    }, delayMs);
    if (!this.options.keepAlive) this.timer.unref();
    return delayMs;
  }

  /** The work succeeded: the next failure waits the first delay again. */
  succeeded(): void {
    this.failures = 0;
  }

  /** Cancels a scheduled retry and refuses new ones. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
