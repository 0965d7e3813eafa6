/**
 * The flags every broker benchmark takes, read one way: which transports, how long to warm up and measure, the
 * load average to wait for, where to write the raw results and whether to keep the agents' logs. Each
 * benchmark lists its own flags and defaults at the top of its file.
 */
import { numberFlag } from './stats.js';
import type { BenchTransportKind } from './transport.js';

export interface CommonOptions {
  /** `--transports websocket,native`; undefined: every transport that loads here. */
  transports: BenchTransportKind[] | undefined;
  /** `--duration` (s, measured). */
  durationSeconds: number;
  /** `--warmup` (s). */
  warmupSeconds: number;
  /** `--max-load`: the 1-minute load average to wait for before starting (default 1.5). */
  maxLoad: number;
  /** `--json <file>`: the raw results. */
  jsonOut: string | undefined;
  /** `--keep-logs`: keep the log directory, removed at the end otherwise. */
  keepLogs: boolean;
}

export function commonOptions(flags: Map<string, string>, defaults: { durationSeconds: number; warmupSeconds: number }): CommonOptions {
  const transports = flags.get('transports');
  return {
    transports: transports ? (transports.split(',').filter(Boolean) as BenchTransportKind[]) : undefined,
    durationSeconds: numberFlag(flags, 'duration', defaults.durationSeconds),
    warmupSeconds: numberFlag(flags, 'warmup', defaults.warmupSeconds),
    maxLoad: numberFlag(flags, 'max-load', 1.5),
    jsonOut: flags.get('json'),
    keepLogs: flags.has('keep-logs'),
  };
}

/** Sum of a metric's series in a `/metrics` text whose labels include every one of `labels`. */
export function metricSum(metrics: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of metrics.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1)) || 0;
  }
  return total;
}
