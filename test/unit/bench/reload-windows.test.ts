/**
 * The reload benchmark's goal table: each reload counts by the longest block in its window, the worst block is
 * split into the event-loop thread's CPU, its wait for a core and the rest (sleep), and the baseline gets
 * windows of the same length.
 */
import { describe, expect, it } from 'vitest';
import type { Block } from '../../../bench/support/agent-probe.js';
import { anatomy, baselineWindows, goalRow, longestIn } from '../../../bench/support/reload-windows.js';

const block = (at: number, ms: number, mainCpuMs?: number, mainWaitMs?: number, gcMs = 0): Block => ({
  at,
  ms,
  cpuMs: ms,
  gcMs,
  ...(mainCpuMs === undefined ? {} : { mainCpuMs }),
  ...(mainWaitMs === undefined ? {} : { mainWaitMs }),
});

describe('reload goal windows', () => {
  it('takes the longest block inside a window, none outside it', () => {
    const blocks = [block(100, 30), block(150, 70), block(400, 90)];
    expect(longestIn(blocks, { from: 90, to: 200 })?.ms).toBe(70);
    expect(longestIn(blocks, { from: 200, to: 300 })).toBeUndefined();
  });

  it('splits a block into CPU, wait for a core and sleep', () => {
    expect(anatomy(block(0, 62, 4, 55.2, 1.2))).toBe('CPU 4.0 ms + wait 55.2 ms + slept 2.8 ms (GC 1.2 ms)');
    expect(anatomy(block(0, 20))).toBe('20.0 ms (GC 0.0 ms)');
    expect(anatomy(undefined)).toBe('–');
  });

  it('counts the windows whose longest block is over the goal, and names the worst', () => {
    const blocks = [block(10, 40, 30, 5), block(110, 60, 8, 50), block(120, 20, 20, 0), block(210, 51, 10, 41), block(500, 300, 1, 299)];
    const windows = [
      { from: 0, to: 100 },
      { from: 100, to: 200 },
      { from: 200, to: 300 },
      { from: 300, to: 400 },
    ];
    const [name, count, over, worst, p99, median, worstAnatomy, mostCpu] = goalRow('first', blocks, windows, 50);
    expect([name, count, over, worst, p99, median]).toEqual(['first', '4', '2', '60.0 ms', '60.0 ms', '40.0 ms']);
    expect(worstAnatomy).toBe('CPU 8.0 ms + wait 50.0 ms + slept 2.0 ms (GC 0.0 ms)');
    expect(mostCpu).toBe('30.0 ms');
  });

  it('lays baseline windows of a reload window’s length at the reload interval', () => {
    expect(baselineWindows(1000, 5000, 1500, 600)).toEqual([
      { from: 1000, to: 1600 },
      { from: 2500, to: 3100 },
      { from: 4000, to: 4600 },
    ]);
  });
});
