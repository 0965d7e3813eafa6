/**
 * The command line of every broker benchmark (`benchFlags`: its doc comment is its usage) and the flags they
 * all take, read one way: which transports, how long to warm up and measure, the
 * load average to wait for, where to write the raw results and whether to keep the agents' logs. Each
 * benchmark lists its own flags and defaults at the top of its file.
 */
import { HELP_WIDTH, wrap } from '../../src/settings-help.js';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { numberFlag, parseFlags } from './stats.js';
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

/**
 * The command line of the benchmark `script` (its `import.meta.url`). Its leading doc comment is its usage: `--help`
 * prints it, and the flags it names are the only ones taken — an unknown or misspelt flag stops the run with a
 * message instead of being ignored.
 */
export function benchFlags(script: string, argv: readonly string[] = process.argv.slice(2)): Map<string, string> {
  const source = readFileSync(fileURLToPath(script), 'utf8');
  const comment = /^\/\*\*([\s\S]*?)\*\//.exec(source)?.[1] ?? '';
  const usage = comment
    .split('\n')
    .map((line) => line.replace(/^ \* ?/, '').replace(/^ \*$/, ''))
    .join('\n')
    .trim();
  const known = new Set([...comment.matchAll(/--([a-z][a-z-]*)/g)].map((m) => m[1]!));
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${within100(usage)}\n`);
    process.exit(0);
  }
  let flags: Map<string, string>;
  try {
    flags = parseFlags(argv);
  } catch (error) {
    return refuse(`${(error as Error).message}`);
  }
  const unknown = [...flags.keys()].filter((flag) => !known.has(flag));
  if (unknown.length > 0) {
    return refuse(`unknown flag${unknown.length > 1 ? 's' : ''} ${unknown.map((f) => `--${f}`).join(', ')}; known: ${[...known].sort().map((f) => `--${f}`).join(' ')}`);
  }
  return flags;
}

/**
 * The usage within 100 columns: its paragraphs (lines that start at the margin) reflowed, an indented line
 * (a command, a list item) continued under its own indentation, two columns further in.
 */
function within100(usage: string): string {
  const out: string[] = [];
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length > 0) out.push(...wrap(paragraph.join(' '), HELP_WIDTH, ''));
    paragraph = [];
  };
  for (const line of usage.split('\n')) {
    if (/^\S/.test(line)) paragraph.push(line);
    else {
      flush();
      out.push(...wrapped(line));
    }
  }
  flush();
  return out.join('\n');
}

function wrapped(line: string): string[] {
  if (line.length <= HELP_WIDTH) return [line];
  const lead = /^\s*/.exec(line)![0];
  return wrap(line.trim(), HELP_WIDTH - 2, lead).map((part, i) => (i === 0 ? part : `  ${part}`));
}

function refuse(message: string): never {
  process.stderr.write(`${message} (--help prints the usage)\n`);
  process.exit(2);
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

/**
 * The node flags a benchmark gives the agent process from its own command line (each benchmark's usage lists the
 * ones it takes): `--cpu-prof` (a V8 CPU profile into `logDir`, bench/support/flame-graph.ts draws it),
 * `--trace-gc` (every garbage collection in the agent's log) and `--node-flags="<flags>"` (any others).
 */
export function agentNodeFlags(flags: Map<string, string>, logDir: string): string[] {
  return [
    ...(flags.has('cpu-prof') ? ['--cpu-prof', '--cpu-prof-dir', logDir] : []),
    ...(flags.has('trace-gc') ? ['--trace-gc'] : []),
    ...(flags.get('node-flags') ?? '').split(' ').filter((flag) => flag !== ''),
  ];
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
