/**
 * The agent as a process of its own (`src/main.ts` through tsx, or the built `dist/src/main.js`), for tests of
 * what only a process shows: its command line, its start and stop, its exit code, what it prints.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ServiceSettings } from '../../src/service.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface AgentProcess {
  readonly child: ChildProcess;
  /** Everything printed so far, stdout and stderr together. */
  readonly output: string;
}

/**
 * Start the agent with `args` (and `env` over this process's environment); `built` runs dist/src/main.js (built
 * beforehand), else src/main.ts through tsx.
 */
export function startAgentProcess(args: readonly string[], options: { built?: boolean; env?: NodeJS.ProcessEnv } = {}): AgentProcess {
  const entry = options.built ? ['dist/src/main.js'] : ['--import', 'tsx', 'src/main.ts'];
  const env = options.env ? { ...process.env, ...options.env } : process.env;
  const child = spawn(process.execPath, [...entry, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return {
    child,
    get output() {
      return output;
    },
  };
}

/** The flags that point the process at a harness's config queues (its config stand-in). */
export function configQueueArgs(settings: Pick<ServiceSettings, 'configRequestQueue' | 'configResponseQueue' | 'configPushQueue'>): string[] {
  return [
    '--config-request-queue',
    settings.configRequestQueue,
    '--config-response-queue',
    settings.configResponseQueue,
    '--config-push-queue',
    settings.configPushQueue,
  ];
}
