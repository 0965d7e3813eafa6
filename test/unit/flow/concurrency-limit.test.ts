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
          // Work of uneven length (1–3 turns of the event loop), so tasks end out of order; no clock involved.
          for (let turn = 0; turn <= i % 3; turn++) await new Promise((r) => setImmediate(r));
          running--;
          done.push(i);
        }),
      ),
    );
    expect(peak).toBe(3);
    expect(done.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(limit.inFlight).toBe(0);
  });

  it('counts the bytes the waiting tasks hold, until each takes its slot', async () => {
    const limit = new ConcurrencyLimit(1);
    let release: () => void = () => undefined;
    const held = limit.run(() => new Promise<void>((resolve) => (release = resolve)), 1_000);
    // A task that finds a free slot waits for nothing and holds nothing in the queue.
    expect([limit.full, limit.queuedBytes]).toEqual([true, 0]);
    const waiting = [limit.run(async () => undefined, 300), limit.run(async () => undefined, 200)];
    expect([limit.queued, limit.queuedBytes]).toEqual([2, 500]);
    release();
    await Promise.all([held, ...waiting]);
    expect([limit.full, limit.queued, limit.queuedBytes]).toEqual([false, 0, 0]);
  });

  it('releases its slot when a task fails', async () => {
    const limit = new ConcurrencyLimit(1);
    await expect(limit.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(limit.run(() => Promise.resolve('next'))).resolves.toBe('next');
  });

  it('refuses a limit below 1', () => {
    expect(() => new ConcurrencyLimit(0)).toThrow(/concurrency must be an integer >= 1, got 0/);
  });

  it('says how long every slot has been held: since the latest of the running tasks started, 0 while one is free', async () => {
    let now = 1_000;
    const limit = new ConcurrencyLimit(2, () => now);
    const release: (() => void)[] = [];
    const hold = (): Promise<void> => limit.run(() => new Promise<void>((resolve) => release.push(resolve)));
    const first = hold();
    await expect.poll(() => release.length).toBe(1);
    now += 60_000;
    expect(limit.allHeldForMs()).toBe(0);
    const second = hold();
    await expect.poll(() => release.length).toBe(2);
    const third = hold();
    expect(limit.queued).toBe(1);
    now += 30_000;
    expect(limit.allHeldForMs()).toBe(30_000);
    release.shift()?.();
    await first;
    await expect.poll(() => release.length).toBe(2);
    now += 5_000;
    // The third task took the freed slot 5 s ago: every slot is held, the newest for 5 s.
    expect(limit.allHeldForMs()).toBe(5_000);
    release.splice(0).forEach((r) => r());
    await Promise.all([second, third]);
    expect(limit.allHeldForMs()).toBe(0);
  });
});
