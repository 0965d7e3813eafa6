/**
 * Preloaded into the agent process by the benchmarks (`node --import <this> main.js`, spawned with an IPC
 * channel). It adds no code to the agent itself; it only watches it:
 *
 *  - event-loop delay: `perf_hooks.monitorEventLoopDelay` (resolution `TG_BENCH_ELD_RESOLUTION_MS`, default 10);
 *  - blocks: with `TG_BENCH_BLOCK_THRESHOLD_MS` set, a 1 ms interval timer records every gap between two of
 *    its ticks longer than the threshold (wall-clock start and length, and the CPU the process used meanwhile),
 *    so a block can be matched to a reload;
 *  - garbage-collection pauses (a `gc` PerformanceObserver), so each block says how much of it the collector held
 *    the event loop;
 *  - memory (`process.memoryUsage()`, optionally right after a full GC when node runs with `--expose-gc`)
 *    and CPU (`process.cpuUsage()`).
 *
 * Protocol: the parent sends `{type: 'sample', reset?, gc?}`, the probe answers `{type: 'sample', ...}`.
 * If the parent goes away (IPC disconnect) the agent exits, so a crashed benchmark never leaves it running.
 */
import { openSync, readSync } from 'node:fs';
import { constants, monitorEventLoopDelay, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

interface SampleRequest {
  type: 'sample';
  /** Reset the event-loop histogram after reading it. */
  reset?: boolean;
  /** Run a full GC before reading memory (needs --expose-gc). */
  gc?: boolean;
}

export interface Block {
  /** Wall-clock ms (Date.now()) when the blocked period started. */
  at: number;
  /** How long no timer could run, ms (the gap minus the 1 ms timer period). */
  ms: number;
  /**
   * CPU time the agent process used during the gap, ms (every thread: an upper bound for the event loop's). On a
   * machine with other work a gap is also time the process waited for a core; this is the part it was running.
   */
  cpuMs: number;
  /**
   * CPU time the event loop's own thread used during the gap, ms (Linux: the thread's schedstat), when known:
   * without worker threads and the garbage collector's helpers, what the block would be on an idle machine.
   */
  mainCpuMs?: number;
  /**
   * Time the event loop's thread was runnable but waited for a core during the gap, ms (the schedstat run queue):
   * the machine's scheduling, not the agent's work. What is in neither this nor `mainCpuMs`, the thread slept
   * (a system call, or the garbage collector waiting for its helper threads).
   */
  mainWaitMs?: number;
  /** Garbage-collection pauses of the event loop's thread inside the gap, ms (Node's `gc` performance entries). */
  gcMs: number;
  /** The longest one of them, ms, and its kind (`minor`: a scavenge; `major`: a mark-compact). */
  longestGc?: { ms: number; kind: string };
}

export interface ProbeSample {
  type: 'sample';
  /** Date.now() of the reading. */
  at: number;
  memory: NodeJS.MemoryUsage;
  cpu: NodeJS.CpuUsage;
  /** Event-loop delay since the last reset, ms. `max` is the longest time a timer was late. */
  eld: { min: number; mean: number; p50: number; p99: number; max: number; count: number; resolutionMs: number };
  /** Blocks since the previous sample (only with TG_BENCH_BLOCK_THRESHOLD_MS). */
  blocks: Block[];
}

const resolutionMs = Number(process.env.TG_BENCH_ELD_RESOLUTION_MS ?? 10) || 10;
const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
histogram.enable();

const blocks: Block[] = [];

/** GC pauses of the last minute, wall-clock ms; a block takes its share when it is sampled (entries arrive late). */
interface GcPause {
  start: number;
  end: number;
  kind: string;
}
const gcPauses: GcPause[] = [];
const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};
new PerformanceObserver((list) => {
  for (const entry of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
    const start = performance.timeOrigin + entry.startTime;
    gcPauses.push({ start, end: start + entry.duration, kind: GC_KINDS[entry.detail?.kind ?? -1] ?? 'other' });
  }
}).observe({ entryTypes: ['gc'] });

/** Fill in each block's GC share, and forget pauses older than a minute. */
function attributeGc(pending: readonly Block[]): void {
  for (const block of pending) {
    const from = block.at;
    const to = block.at + block.ms + 1;
    let gcMs = 0;
    for (const pause of gcPauses) {
      const overlap = Math.min(to, pause.end) - Math.max(from, pause.start);
      if (overlap <= 0) continue;
      gcMs += overlap;
      if (!block.longestGc || overlap > block.longestGc.ms) block.longestGc = { ms: overlap, kind: pause.kind };
    }
    block.gcMs = Math.min(gcMs, block.ms);
  }
  const horizon = Date.now() - 60_000;
  while (gcPauses.length > 0 && gcPauses[0]!.end < horizon) gcPauses.shift();
}
const threshold = Number(process.env.TG_BENCH_BLOCK_THRESHOLD_MS ?? 0);
if (threshold > 0) {
  const mainThreadNs = mainThreadCpu();
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  let lastMain = mainThreadNs?.();
  const timer = setInterval(() => {
    const now = performance.now();
    const cpu = process.cpuUsage();
    const main = mainThreadNs?.();
    const gap = now - last - 1;
    if (gap > threshold) {
      const cpuMs = (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000;
      const block: Block = { at: performance.timeOrigin + last, ms: gap, cpuMs: Math.min(cpuMs, gap), gcMs: 0 };
      if (main !== undefined && lastMain !== undefined) {
        block.mainCpuMs = Math.min(Number(main.cpu - lastMain.cpu) / 1e6, gap);
        block.mainWaitMs = Math.min(Number(main.wait - lastMain.wait) / 1e6, gap);
      }
      blocks.push(block);
    }
    last = now;
    lastCpu = cpu;
    lastMain = main;
  }, 1);
  timer.unref();
}

/**
 * A reader of the CPU time of this, the main, thread so far and of its time waiting for a core (ns); undefined
 * where /proc has no schedstat.
 */
function mainThreadCpu(): (() => { cpu: bigint; wait: bigint }) | undefined {
  let fd: number;
  try {
    fd = openSync(`/proc/self/task/${process.pid}/schedstat`, 'r');
  } catch {
    return undefined;
  }
  const buffer = Buffer.alloc(64);
  return () => {
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    const [cpu, wait] = buffer.toString('latin1', 0, n).split(' ');
    return { cpu: BigInt(cpu!), wait: BigInt(wait!) };
  };
}

const nsToMs = (ns: number): number => ns / 1e6;

if (process.send) {
  process.on('message', (message: SampleRequest) => {
    if (message?.type !== 'sample') return;
    const gc = (globalThis as { gc?: () => void }).gc;
    if (message.gc && gc) gc();
    attributeGc(blocks);
    const sample: ProbeSample = {
      type: 'sample',
      at: Date.now(),
      memory: process.memoryUsage(),
      cpu: process.cpuUsage(),
      eld: {
        min: nsToMs(histogram.min),
        mean: nsToMs(histogram.mean),
        p50: nsToMs(histogram.percentile(50)),
        p99: nsToMs(histogram.percentile(99)),
        max: nsToMs(histogram.max),
        count: histogram.count,
        resolutionMs,
      },
      blocks: blocks.splice(0),
    };
    if (message.reset) histogram.reset();
    process.send?.(sample);
  });
  process.on('disconnect', () => process.exit(3));
}
