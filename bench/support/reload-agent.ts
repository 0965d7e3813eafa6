/**
 * The whole agent as the reload benchmarks drive it: the app of src/app.ts on an in-process bus, not started
 * (no broker, no HTTP port), taking config changes through `AgentService.applyConfigChange`, the entry the
 * config watcher uses; and the event-loop thread's own CPU time, which waiting for a core does not inflate.
 */
import { openSync, readSync } from 'node:fs';
import { pino } from 'pino';
import { createAgentApp, type AgentApp } from '../../src/app.js';
import { MemoryTransport } from '../../src/bus/memory/memory-transport.js';
import type { TypeValues } from '../../src/config/workspace-config.js';
import { SettingsSchema } from '../../src/settings.js';

/** The whole agent (not started: no broker, no HTTP port), as the reload benchmarks drive it. */
export async function reloadableAgent(): Promise<{ app: AgentApp; close(): Promise<void> }> {
  const logger = pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: false }));
  const settings = Object.freeze({ ...SettingsSchema.parse({}), metricsPort: 0, mcpDiscovery: false });
  const app = await createAgentApp(settings, new MemoryTransport(), logger);
  return { app, close: () => app.stop() };
}

/** Everything the agent does with a workspace's decoded `tool` values, until its workflow checks have reported. */
export async function applyTools(app: AgentApp, workspace: string, snapshot: Readonly<Record<string, TypeValues>>, version: number): Promise<void> {
  await app.service.applyConfigChange({ workspace, changedTypes: ['tool'], snapshot, version });
  await app.workflow.settled(workspace);
}

/** CPU time (ms) of the event-loop thread so far; NaN where /proc has no schedstat. */
export function mainThreadCpuMs(): () => number {
  const clock = mainThreadClock();
  return () => clock().cpuMs;
}

/**
 * The event-loop thread's scheduler clock (Linux schedstat), ms so far: the time it ran on a core, and the time it
 * was runnable but waited for one (the run queue). A gap of the event loop is the sum of the two plus the time the
 * thread slept (a system call, or waiting for the garbage collector's helper threads). NaN where /proc has none.
 */
export function mainThreadClock(): () => { cpuMs: number; waitMs: number } {
  let fd: number;
  try {
    fd = openSync(`/proc/self/task/${process.pid}/schedstat`, 'r');
  } catch {
    return () => ({ cpuMs: Number.NaN, waitMs: Number.NaN });
  }
  const buffer = Buffer.alloc(64);
  return () => {
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    const [cpu, wait] = buffer.toString('latin1', 0, n).split(' ');
    return { cpuMs: Number(cpu) / 1e6, waitMs: Number(wait) / 1e6 };
  };
}
