/**
 * A real RabbitMQ broker for integration tests and `npm run local -- --pubsub-backend rabbitmq`.
 *
 * {@link startRabbitMq} takes `RABBITMQ_URL` (`amqp://user:password@host:port/vhost`, a running broker that
 * `stop()` leaves alone) or starts Debian's `rabbitmq-server` (`apt-get install rabbitmq-server`) as a process
 * of its own: a fresh node in a temporary directory, on free ports of 127.0.0.1, user guest allowed from there,
 * `max_message_size` 8 MiB (so a test can reach it). Its packaged service is never used. `stop()` ends the node
 * and the Erlang port mapper if the start launched it. `kill()` and `start()` stop the node and start it again
 * with the same name, ports and data (the broker faults of `npm run bench:faults`).
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorMessage } from '../src/errors/error-text.js';
import { NodeProcess } from './child-process.js';
import { freePort } from './ports.js';

export const RABBITMQ_SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server';
/** The broker's `max_message_size` in the nodes started here. */
export const TEST_RABBITMQ_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
const START_TIMEOUT_MS = 120_000;

export interface RabbitMqHandle {
  /** `amqp://guest:guest@127.0.0.1:<port>/%2F`. */
  readonly url: string;
  readonly description: string;
  /** The node's process id while it runs, if this process started it (for its CPU time). */
  readonly pid: number | undefined;
  /** Stops the node (SIGKILL: a crash; SIGTERM: a clean stop) until `start()`; only for a node this process started. */
  kill(signal: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  /** Starts a killed node again with the same name, ports and data; resolves once it listens. */
  start(): Promise<void>;
  /** Stops the node if this process started it. Safe to call twice. */
  stop(): Promise<void>;
}

export class RabbitMqUnavailableError extends Error {
  override readonly name = 'RabbitMqUnavailableError';
}

/** Why no RabbitMQ can be had here, or undefined when one can. */
export function rabbitMqUnavailable(): string | undefined {
  if (process.env.RABBITMQ_URL) return undefined;
  return existsSync(RABBITMQ_SERVER) ? undefined : `no RABBITMQ_URL and no ${RABBITMQ_SERVER} (apt-get install rabbitmq-server)`;
}

export async function startRabbitMq(): Promise<RabbitMqHandle> {
  const given = process.env.RABBITMQ_URL?.trim();
  if (given) {
    const notHere = async () => Promise.reject(new RabbitMqUnavailableError('a broker given with RABBITMQ_URL is not stopped or started here'));
    return { url: given, description: `RabbitMQ at ${given.replace(/\/\/[^@]*@/, '//')}`, pid: undefined, kill: notHere, start: notHere, stop: async () => undefined };
  }
  const missing = rabbitMqUnavailable();
  if (missing) throw new RabbitMqUnavailableError(missing);

  const dir = mkdtempSync(join(tmpdir(), 'tg-agent-rabbitmq-'));
  const port = await freePort();
  const distPort = await freePort();
  writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
  writeFileSync(
    join(dir, 'rabbitmq.conf'),
    [`listeners.tcp.default = 127.0.0.1:${port}`, 'loopback_users = none', `max_message_size = ${TEST_RABBITMQ_MAX_MESSAGE_BYTES}`, ''].join('\n'),
  );
  const mapperBefore = epmdPids();
  const env = {
    ...process.env,
    HOME: dir,
    RABBITMQ_NODENAME: `tg-agent-${port}@localhost`,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    // The script then execs the Erlang VM, so the child is the node itself and a signal reaches it (else the
    // script runs the VM in the background and a SIGKILL ends only the script); `-noinput` as the script's own.
    RABBITMQ_ALLOW_INPUT: 'true',
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: `-noinput -start_epmd false -erl_epmd_port ${distPort}`,
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_PID_FILE: join(dir, 'pid'),
  };
  const node = new NodeProcess(() => spawn(RABBITMQ_SERVER, [], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true }), port, 'rabbitmq-server', START_TIMEOUT_MS);
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await node.kill('SIGTERM');
    for (const pid of epmdPids()) if (!mapperBefore.has(pid)) killQuietly(pid);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await node.start();
  } catch (error) {
    await stop();
    throw new RabbitMqUnavailableError(errorMessage(error), { cause: error });
  }
  return {
    url: `amqp://guest:guest@127.0.0.1:${port}/%2F`,
    description: `rabbitmq-server (Debian) on 127.0.0.1:${port}`,
    get pid() {
      return node.pid;
    },
    kill: (signal) => node.kill(signal),
    start: () => node.start(),
    stop,
  };
}

export { rabbitMqArgs } from '../src/local-stack.js';

/**
 * The Erlang port mappers on the default port running now (rabbitmq-server's helper scripts start one even when
 * the node needs none); one started with `-port` belongs to somebody else (a cluster's) and is never counted.
 */
function epmdPids(): Set<number> {
  try {
    return new Set(
      execFileSync('pgrep', ['-x', 'epmd'], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map(Number)
        .filter((pid) => !commandLine(pid).includes('-port')),
    );
  } catch {
    return new Set();
  }
}

function commandLine(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    // Gone already.
  }
}

