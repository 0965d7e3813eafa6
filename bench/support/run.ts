/** Set-up and tear-down shared by the benchmarks: log, cleanup stack, signal handling, machine header. */
import { writeFileSync } from 'node:fs';
import type { BenchBroker } from './broker.js';
import { loadAverage, machineInfo } from './proc.js';

export function log(line: string): void {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

/** Runs `main` with a cleanup stack that also runs on SIGINT/SIGTERM, so no broker or agent is left behind. */
export async function withCleanup(main: (defer: (fn: () => Promise<unknown> | unknown) => void) => Promise<void>): Promise<void> {
  const stack: (() => Promise<unknown> | unknown)[] = [];
  let cleaning: Promise<void> | undefined;
  const cleanup = (): Promise<void> =>
    (cleaning ??= (async () => {
      for (const fn of stack.reverse()) {
        try {
          await fn();
        } catch (error) {
          log(`cleanup step failed: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    })());
  const onSignal = (signal: string) => {
    log(`${signal}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', () => onSignal('SIGINT'));
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  try {
    await main((fn) => stack.push(fn));
  } finally {
    await cleanup();
  }
}

export function header(title: string, broker: BenchBroker | undefined, extra: string[] = []): string {
  const m = machineInfo();
  return [
    `## ${title}`,
    '',
    `- machine: ${m.cpus} CPUs (${m.cpuModel}), ${m.memory} RAM, Linux ${m.kernel}`,
    `- Node ${m.node}; Pulsar ${broker?.version ?? '?'} standalone (${broker?.source ?? '?'}), WebSocket transport, loopback only`,
    `- load average at the start: ${loadAverage()}`,
    ...extra.map((line) => `- ${line}`),
    '',
  ].join('\n');
}

export function writeJson(path: string | undefined, value: unknown): void {
  if (path) writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}
