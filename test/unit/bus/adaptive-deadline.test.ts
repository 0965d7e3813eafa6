import { describe, expect, it } from 'vitest';
import { AdaptiveDeadline, MIN_SAMPLES, RECOMPUTE_EVERY, WINDOW, type DeadlineSettings } from '../../../src/bus/adaptive-deadline.js';
import { HedgeBudget } from '../../../src/bus/hedge-budget.js';

const SETTINGS: DeadlineSettings = { quantile: 0.99, factor: 2, floorMs: 2_000, ceilingMs: 60_000 };

function fed(latencies: readonly number[], settings: DeadlineSettings = SETTINGS): AdaptiveDeadline {
  const deadline = new AdaptiveDeadline(settings);
  for (const ms of latencies) deadline.observe(ms);
  return deadline;
}

const repeat = (count: number, ms: number): number[] => Array.from({ length: count }, () => ms);
/** Replies after which a computation falls on the last one, with a full window (the first 4 have left it). */
const FULL = MIN_SAMPLES + 15 * RECOMPUTE_EVERY;

describe('AdaptiveDeadline', () => {
  it('is the ceiling until enough first replies have been seen', () => {
    expect(fed([]).ms).toBe(60_000);
    expect(fed(repeat(MIN_SAMPLES - 1, 100)).ms).toBe(60_000);
    expect(fed(repeat(MIN_SAMPLES, 100)).ms).toBe(2_000);
  });

  it('is the quantile of recent first replies times the factor', () => {
    // 20 replies of 5 s: p99 × 2 = 10 s.
    expect(fed(repeat(MIN_SAMPLES, 5_000)).ms).toBe(10_000);
    // Between the floor and the ceiling it follows the service: 1.5 s replies give 3 s.
    expect(fed(repeat(FULL, 1_500)).ms).toBe(3_000);
  });

  it('follows the tail: the slowest 1 % decide, not the typical reply', () => {
    // 3 slow replies in 256 (1.2 %) are above the 99th percentile's rank; 2 (0.8 %) are not.
    const window = (slow: number): number[] => [...repeat(FULL - slow, 100), ...repeat(slow, 4_000)];
    expect(fed(window(3)).ms).toBe(8_000);
    expect(fed(window(2)).ms).toBe(2_000);
    expect(fed(window(2), { ...SETTINGS, quantile: 0.995 }).ms).toBe(8_000);
  });

  it('keeps between the floor and the ceiling', () => {
    expect(fed(repeat(MIN_SAMPLES, 1)).ms).toBe(2_000);
    expect(fed(repeat(MIN_SAMPLES, 45_000)).ms).toBe(60_000);
  });

  it('forgets replies older than its window', () => {
    const deadline = fed(repeat(FULL, 20_000));
    expect(deadline.ms).toBe(40_000);
    for (const ms of repeat(WINDOW - 1, 100)) deadline.observe(ms);
    expect(deadline.ms).toBe(40_000);
    deadline.observe(100);
    expect(deadline.ms).toBe(2_000);
  });

  it('recomputes every few replies and tells each move of the deadline', () => {
    const moves: number[] = [];
    const deadline = new AdaptiveDeadline(SETTINGS, (ms) => moves.push(ms));
    for (const ms of repeat(MIN_SAMPLES, 100)) deadline.observe(ms);
    expect(moves).toEqual([2_000]);
    // Slow replies move it only at the next computation.
    for (const ms of repeat(RECOMPUTE_EVERY - 1, 10_000)) deadline.observe(ms);
    expect(deadline.ms).toBe(2_000);
    deadline.observe(10_000);
    expect(deadline.ms).toBe(20_000);
    expect(moves).toEqual([2_000, 20_000]);
  });

  it('ignores readings that are not a duration', () => {
    const deadline = fed([...repeat(MIN_SAMPLES - 1, 100), Number.NaN, -5, Number.POSITIVE_INFINITY]);
    expect(deadline.ms).toBe(60_000);
  });

  it('refuses settings that make no deadline', () => {
    expect(() => new AdaptiveDeadline({ ...SETTINGS, quantile: 0 })).toThrow(/quantile must be in \(0, 1\]/);
    expect(() => new AdaptiveDeadline({ ...SETTINGS, factor: 0.5 })).toThrow(/factor must be/);
    expect(() => new AdaptiveDeadline({ ...SETTINGS, floorMs: 5_000, ceilingMs: 1_000 })).toThrow(/ceiling finite and at least the floor/);
  });
});

describe('HedgeBudget', () => {
  it('allows a burst, then one hedge per calls that earned it', () => {
    const budget = new HedgeBudget(0.25, 2);
    expect([budget.take(), budget.take(), budget.take()]).toEqual([true, true, false]);
    for (let i = 0; i < 3; i++) budget.called();
    expect(budget.take()).toBe(false);
    budget.called();
    expect([budget.take(), budget.take()]).toEqual([true, false]);
  });

  it('never holds more than its burst', () => {
    const budget = new HedgeBudget(1, 3);
    for (let i = 0; i < 100; i++) budget.called();
    expect([budget.take(), budget.take(), budget.take(), budget.take()]).toEqual([true, true, true, false]);
  });
});
