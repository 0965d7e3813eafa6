import { describe, expect, it } from 'vitest';
import { selfTimeLines, topSelfTime, type CpuProfile } from '../../../bench/support/flame-graph.js';

const frame = (functionName: string, url = '', lineNumber = 0) => ({ functionName, url, lineNumber });

/** root → main → { hot (twice, on two paths), cold }, idle and the garbage collector beside them. */
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 5, 6, 7] },
    { id: 2, callFrame: frame('main', 'file:///app/src/main.js', 9), children: [3, 4, 8] },
    { id: 3, callFrame: frame('hot', 'file:///app/src/hot.js', 0) },
    { id: 4, callFrame: frame('cold', 'file:///app/src/cold.js', 4) },
    { id: 5, callFrame: frame('(garbage collector)') },
    { id: 6, callFrame: frame('(idle)') },
    { id: 7, callFrame: frame('other', 'file:///app/src/other.js', 0), children: [9] },
    { id: 8, callFrame: frame('hot', 'file:///app/src/hot.js', 0) },
    { id: 9, callFrame: frame('hot', 'file:///app/src/hot.js', 0) },
  ],
  // Each sample's time is the next delta: hot 30 + 20 + 10, gc 25, cold 10, main 5, idle 1 000 (left out).
  samples: [3, 8, 9, 5, 4, 2, 6],
  timeDeltas: [0, 30_000, 20_000, 10_000, 25_000, 10_000, 5_000, 1_000_000],
};

describe('topSelfTime', () => {
  it('sums a function over its call paths, leaves idle out and gives shares of the busy time', () => {
    const top = topSelfTime(profile);
    expect(top.map((e) => e.name)).toEqual(['hot hot.js:1', '(garbage collector)', 'cold cold.js:5', 'main main.js:10']);
    expect(top[0]!.selfMs).toBe(60);
    expect(top[0]!.share).toBeCloseTo(60 / 100);
    expect(top[1]!.share).toBeCloseTo(25 / 100);
    expect(top.reduce((sum, e) => sum + e.share, 0)).toBeCloseTo(1);
  });

  it('keeps only the largest entries asked for', () => {
    expect(topSelfTime(profile, 2).map((e) => e.name)).toEqual(['hot hot.js:1', '(garbage collector)']);
  });

  it('prints share, milliseconds and name', () => {
    expect(selfTimeLines(topSelfTime(profile, 1))).toEqual([' 60.0 %       60 ms  hot hot.js:1']);
  });
});
