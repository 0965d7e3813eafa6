/**
 * Process and machine readings from /proc (Linux): CPU time of a process (all its threads), its RSS and
 * peak RSS, the machine's busy CPU time, the load average, and a description of the machine.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, cpus, release, totalmem } from 'node:os';

let clockTicks: number | undefined;

/** USER_HZ: /proc CPU times are in these ticks (almost always 100). */
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** User + system CPU seconds of a process (every thread), or NaN when it cannot be read. */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces; the fields after it start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); utime is field 14, stime field 15.
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond();
  } catch {
    return Number.NaN;
  }
}

/**
 * User + system CPU seconds of each thread of a process so far, summed by thread name (`comm`): the main
 * thread as `main` (its thread id is the process id), every other as the kernel names it (`V8 DefaultWorke`
 * for V8's platform threads: GC helpers and the compiler; `libuv-worker`; a native library's threads).
 */
export function threadCpuSeconds(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = tid === String(pid) ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out[name] = (out[name] ?? 0) + (Number(fields[11]) + Number(fields[12])) / ticksPerSecond();
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/** Per-thread-name CPU seconds between two `threadCpuSeconds` readings (threads that ended count from 0). */
export function threadCpuBetween(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, seconds] of Object.entries(after)) out[name] = seconds - (before[name] ?? 0);
  return out;
}

export interface ProcessMemory {
  /** Resident set size now, bytes. */
  rss: number;
  /** Peak resident set size since the process started (VmHWM), bytes. */
  peakRss: number;
}

export function processMemory(pid: number): ProcessMemory {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
    return { rss: kb('VmRSS'), peakRss: kb('VmHWM') };
  } catch {
    return { rss: Number.NaN, peakRss: Number.NaN };
  }
}

/** Busy (non-idle, non-iowait) CPU seconds of the whole machine since boot, summed over every core. */
export function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already in user.
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = values;
  return (user + nice + system + irq + softirq + steal) / ticksPerSecond();
}

export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').trim().split(/\s+/).slice(0, 3).join(' ');
}

export function loadAverage1(): number {
  return Number(readFileSync('/proc/loadavg', 'utf8').trim().split(/\s+/)[0]);
}

export interface CpuReading {
  /** Wall seconds of the window. */
  wall: number;
  /** CPU seconds of each named process during the window. */
  processes: Record<string, number>;
  /** Busy CPU seconds of the whole machine during the window. */
  machine: number;
  /** Busy CPU seconds of everything else (other engineers' work, the kernel): machine − named processes. */
  others: number;
}

/** CPU use of named processes (and of everything else) over a window. */
export class CpuMeter {
  private readonly start: { wall: number; machine: number; processes: Record<string, number> };

  constructor(private readonly pids: Readonly<Record<string, number | undefined>>) {
    this.start = { wall: performance.now(), machine: machineBusySeconds(), processes: this.read() };
  }

  private read(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, pid] of Object.entries(this.pids)) out[name] = pid === undefined ? Number.NaN : processCpuSeconds(pid);
    return out;
  }

  stop(): CpuReading {
    const now = this.read();
    const processes: Record<string, number> = {};
    for (const name of Object.keys(now)) processes[name] = (now[name] ?? Number.NaN) - (this.start.processes[name] ?? Number.NaN);
    const machine = machineBusySeconds() - this.start.machine;
    const named = Object.values(processes).filter(Number.isFinite).reduce((s, v) => s + v, 0);
    return {
      wall: (performance.now() - this.start.wall) / 1000,
      processes,
      machine,
      others: Math.max(0, machine - named),
    };
  }
}

/** CPU seconds per wall second as a percentage of one core, e.g. "143 %". */
export function coreShare(cpuSeconds: number, wallSeconds: number): string {
  return Number.isFinite(cpuSeconds) ? `${Math.round((cpuSeconds / wallSeconds) * 100)} %` : '–';
}

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  memory: string;
  node: string;
  kernel: string;
}

export function machineInfo(): MachineInfo {
  return {
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memory: `${(totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    node: process.version,
    kernel: release(),
  };
}

/** Waits (up to `maxWaitMs`) until the 1-minute load average is at most `threshold`. Returns the last reading. */
export async function waitForLowLoad(threshold: number, maxWaitMs: number, log: (line: string) => void): Promise<string> {
  const deadline = Date.now() + maxWaitMs;
  let announced = false;
  while (loadAverage1() > threshold && Date.now() < deadline) {
    if (!announced) {
      log(`load average ${loadAverage()} is above ${threshold}: waiting (up to ${Math.round(maxWaitMs / 1000)} s) for it to drop`);
      announced = true;
    }
    await new Promise((resolve) => setTimeout(resolve, 5000));
  }
  const reading = loadAverage();
  if (loadAverage1() > threshold) log(`load average still ${reading} after waiting; measuring anyway (noted in the results)`);
  return reading;
}

/** The CPUs this process may run on (Linux: `taskset -p`), e.g. [0, 1]. */
function allowedCpus(): number[] {
  const list = execFileSync('taskset', ['-c', '-p', String(process.pid)], { encoding: 'utf8' }).split(':').at(-1)!.trim();
  return list.split(',').flatMap((part) => {
    const [from, to] = part.split('-').map(Number);
    return Array.from({ length: (to ?? from!) - from! + 1 }, (_, i) => from! + i);
  });
}

/**
 * Gives the agent the CPUs in `agentCpus` (a taskset list, e.g. "0") to itself: this process and every thread
 * it has, hence every process it starts later (broker, config service), move to the others. Returns the two
 * lists for the report. The agent is then started under `taskset -c <agentCpus>` (AgentProcessOptions.cpus).
 */
export function reserveCpusForAgent(agentCpus: string): { agent: string; others: string } {
  const reserved = new Set(agentCpus.split(',').map(Number));
  const others = allowedCpus().filter((cpu) => !reserved.has(cpu));
  if (others.length === 0) throw new Error(`--agent-cpus ${agentCpus} leaves no CPU for the broker and the load generator`);
  execFileSync('taskset', ['-a', '-c', '-p', others.join(','), String(process.pid)], { stdio: 'ignore' });
  return { agent: agentCpus, others: others.join(',') };
}
