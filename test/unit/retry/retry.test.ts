import { afterEach, describe, expect, it, vi } from 'vitest';
import { exponentialBackoff, fixedBackoff } from '../../../src/retry/backoff.js';
import { RetryTimer } from '../../../src/retry/retry-timer.js';
import { retry, type RetryEvent } from '../../../src/retry/retry.js';

afterEach(() => {
  vi.useRealTimers();
});

function failing(times: number, result = 'ok'): (attempt: number) => Promise<string> {
  return async (attempt) => {
    if (attempt <= times) throw new Error(`failure ${attempt}`);
    return result;
  };
}

describe('exponentialBackoff', () => {
  it('doubles from the initial delay up to the maximum', () => {
    const backoff = exponentialBackoff({ initialMs: 250, maxMs: 5000 });
    expect([1, 2, 3, 4, 5, 6, 7, 50].map(backoff)).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000, 5000]);
  });

  it('with equal jitter stays between half and all of the exponential delay', () => {
    const backoff = exponentialBackoff({ initialMs: 200, maxMs: 10_000, jitter: 'equal' });
    for (let failures = 1; failures <= 12; failures++) {
      const ceiling = Math.min(10_000, 200 * 2 ** (failures - 1));
      const delay = backoff(failures);
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
  });
});

describe('retry', () => {
  it('returns the first success and reports every retried failure', async () => {
    const events: RetryEvent[] = [];
    const result = await retry(failing(2), { backoff: fixedBackoff(1), onRetry: (e) => events.push(e) });
    expect(result).toBe('ok');
    expect(events.map((e) => [(e.error as Error).message, e.attempt, e.delayMs])).toEqual([
      ['failure 1', 1, 1],
      ['failure 2', 2, 1],
    ]);
  });

  it('rejects with the last failure after maxAttempts', async () => {
    const operation = vi.fn(failing(10));
    await expect(retry(operation, { backoff: fixedBackoff(1), maxAttempts: 3 })).rejects.toThrow('failure 3');
    expect(operation).toHaveBeenCalledTimes(3);
  });

  it('stops at once on a failure retryIf refuses', async () => {
    const operation = vi.fn(failing(10));
    await expect(
      retry(operation, { backoff: fixedBackoff(1), retryIf: (error) => (error as Error).message !== 'failure 2' }),
    ).rejects.toThrow('failure 2');
    expect(operation).toHaveBeenCalledTimes(2);
  });

  it('cuts the last wait to maxElapsedMs and then gives up', async () => {
    vi.useFakeTimers();
    const delays: number[] = [];
    const outcome = retry(failing(100), {
      backoff: fixedBackoff(400),
      maxElapsedMs: 1000,
      onRetry: (e) => delays.push(e.delayMs),
    }).catch((error: unknown) => error);
    await vi.runAllTimersAsync();
    expect(((await outcome) as Error).message).toBe('failure 4');
    expect(delays).toEqual([400, 400, 200]);
  });

  it('ends the wait and rejects with the latest failure when the signal aborts', async () => {
    const stop = new AbortController();
    const operation = vi.fn(failing(100));
    const outcome = retry(operation, {
      backoff: fixedBackoff(60_000),
      signal: stop.signal,
      onRetry: () => stop.abort(),
    });
    await expect(outcome).rejects.toThrow('failure 1');
    expect(operation).toHaveBeenCalledTimes(1);
  });
});

describe('RetryTimer', () => {
  it('schedules one retry at a time with a growing delay, and starts over after a success', async () => {
    vi.useFakeTimers();
    const timer = new RetryTimer(exponentialBackoff({ initialMs: 100, maxMs: 1000 }));
    const runs: number[] = [];
    expect(timer.retryLater(() => runs.push(timer.attempt))).toBe(100);
    expect(timer.retryLater(() => runs.push(-1))).toBeUndefined();
    await vi.advanceTimersByTimeAsync(100);
    expect(runs).toEqual([1]);
    expect(timer.retryLater(() => runs.push(timer.attempt))).toBe(200);
    await vi.advanceTimersByTimeAsync(200);
    expect(runs).toEqual([1, 2]);
    timer.succeeded();
    expect(timer.retryLater(() => runs.push(timer.attempt))).toBe(100);
    await vi.advanceTimersByTimeAsync(100);
    expect(runs).toEqual([1, 2, 1]);
  });

  it('runs nothing once stopped', async () => {
    vi.useFakeTimers();
    const timer = new RetryTimer(fixedBackoff(50));
    const task = vi.fn();
    timer.retryLater(task);
    timer.stop();
    expect(timer.retryLater(task)).toBeUndefined();
    await vi.advanceTimersByTimeAsync(500);
    expect(task).not.toHaveBeenCalled();
  });
});
