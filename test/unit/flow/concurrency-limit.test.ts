import { describe, expect, it } from 'vitest';
import { ConcurrencyLimit } from '../../../src/flow/concurrency-limit.js';

describe('the concurrency limit', () => {
  it('never runs more tasks at once than its limit, and runs them all', async () => {
    const limit = new ConcurrencyLimit(3);
    let running = 0;
    let peak = 0;
    const done: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        limit.run(async () => {
          running++;
          peak = Math.max(peak, running);
          await new Promise((r) => setTimeout(r, 1 + (i % 3)));
          running--;
          done.push(i);
        }),
      ),
    );
    expect(peak).toBe(3);
    expect(done.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(limit.inFlight).toBe(0);
  });

  it('releases its slot when a task fails', async () => {
    const limit = new ConcurrencyLimit(1);
    await expect(limit.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(limit.run(() => Promise.resolve('next'))).resolves.toBe('next');
  });

  it('refuses a limit below 1', () => {
    expect(() => new ConcurrencyLimit(0)).toThrow(/concurrency must be an integer >= 1, got 0/);
  });
});
