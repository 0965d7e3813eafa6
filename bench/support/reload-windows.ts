/**
 * The goal table of bench/reload.ts: for each reload, the longest event-loop block between its push and a little
 * after the agent reported it applied; per case, how many of those are over the goal, the worst and the p99; and
 * of the worst block, what it was made of (the event-loop thread's CPU, its wait for a core, sleep, GC). The
 * baseline without reloads gets the same figures from windows of the same length, one per reload interval.
 */
import type { Block } from './agent-probe.js';
import { ms, quantile } from './stats.js';

/** A stretch of time (Date.now() ms) whose longest block is one sample of the goal. */
export interface Window {
  from: number;
  to: number;
}

/** The longest block in a window, or none. */
export function longestIn(blocks: readonly Block[], window: Window): Block | undefined {
  let longest: Block | undefined;
  for (const b of blocks) if (b.at >= window.from && b.at <= window.to && (longest === undefined || b.ms > longest.ms)) longest = b;
  return longest;
}

/** What a block was made of: "62.1 ms = CPU 4.0 + wait 55.3 + slept 2.8 (GC 1.2)". */
export function anatomy(block: Block | undefined): string {
  if (block === undefined) return '–';
  if (block.mainCpuMs === undefined || block.mainWaitMs === undefined) return `${ms(block.ms, 1)} (GC ${ms(block.gcMs, 1)})`;
  const slept = Math.max(0, block.ms - block.mainCpuMs - block.mainWaitMs);
  return `CPU ${ms(block.mainCpuMs, 1)} + wait ${ms(block.mainWaitMs, 1)} + slept ${ms(slept, 1)} (GC ${ms(block.gcMs, 1)})`;
}

/** One row of the goal table: windows, how many have a block over the goal, the worst and p99, the worst's anatomy. */
export function goalRow(name: string, blocks: readonly Block[], windows: readonly Window[], goalMs: number): string[] {
  const longest = windows.map((w) => longestIn(blocks, w));
  const lengths = longest.map((b) => b?.ms ?? 0);
  const worst = longest.reduce<Block | undefined>((most, b) => (b !== undefined && (most === undefined || b.ms > most.ms) ? b : most), undefined);
  const mostCpu = Math.max(0, ...longest.map((b) => b?.mainCpuMs ?? 0));
  return [
    name,
    String(windows.length),
    String(lengths.filter((l) => l > goalMs).length),
    ms(Math.max(0, ...lengths), 1),
    ms(quantile(lengths, 0.99), 1),
    ms(quantile(lengths, 0.5), 1),
    anatomy(worst),
    ms(mostCpu, 1),
  ];
}

export const GOAL_HEADER = [
  'phase',
  'windows',
  'over the goal',
  'worst',
  'p99',
  'median',
  'the worst block: event-loop thread CPU + wait for a core + slept (GC in it)',
  'most event-loop thread CPU in one window’s longest block',
];

/** Windows of `lengthMs` every `everyMs` through [from, to): the baseline's stand-ins for reloads. */
export function baselineWindows(from: number, to: number, everyMs: number, lengthMs: number): Window[] {
  const out: Window[] = [];
  for (let at = from; at + lengthMs <= to; at += everyMs) out.push({ from: at, to: at + lengthMs });
  return out;
}
