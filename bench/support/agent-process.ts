/**
 * The agent under test as its own process: `node --import <probe> <build>/dist/src/main.js <flags>`, exactly
 * as deployed (settings from flags, WebSocket transport, metrics/health HTTP server, pino logging at the
 * default `info` level — one audit line per iteration — into a log file). A separate process keeps its RSS,
 * CPU time and event loop apart from the load generator and the stand-ins.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, writeFileSync } from 'node:fs';
import type { ConfigQueues } from '../../dev/stand-ins/config-service.js';
import type { ProbeSample } from './agent-probe.js';
import type { InitMessage, ReloadedMessage, ReloadKind } from './config-process.js';
import type { AgentBuild } from './build.js';
import { freePort } from './broker.js';
import { processMemory, type ProcessMemory } from './proc.js';
import { sleep } from './stats.js';
import { agentBusArgs, type BenchBrokerAddress, type BenchTransportKind } from './transport.js';

export interface AgentProcessOptions {
  build: AgentBuild;
  webSocketUrl: string;
  concurrency: number;
  configQueues: ConfigQueues;
  /** stdout and stderr of the agent (its JSON log). */
  logFile: string;
  /** Extra environment for the probe (TG_BENCH_*). */
  env?: Record<string, string>;
  /** Extra node flags, e.g. `--expose-gc`. */
  nodeFlags?: string[];
  /** Extra agent flags. */
  args?: string[];
  /** `--transport` of the agent (default websocket), and the broker's binary protocol URL for native. */
  transport?: BenchTransportKind;
  serviceUrl?: string;
  /** With transport `kafka`: the broker, `host:port`. */
  kafkaBootstrapServers?: string;
  /** With transport `rabbitmq`: the broker, `amqp://…`. */
  rabbitmqUrl?: string;
  /** Run the agent on these CPUs only (a taskset list, e.g. "0"; see reserveCpusForAgent). */
  cpus?: string;
  /**
   * Run the agent in a scheduling group of its own (a new session: its own Linux autogroup) with this nice value
   * (-20…19; below 0 needs root): its share of the CPU against everything else on the machine, as a pod's CPU
   * request sets its cgroup's weight. Absent: the agent shares the benchmark's group.
   */
  groupNice?: number;
}

export class AgentProcess {
  private exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private waiters: ((sample: ProbeSample) => void)[] = [];

  private constructor(
    private readonly child: ChildProcess,
    readonly metricsPort: number,
    readonly logFile: string,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    child.on('message', (message: ProbeSample) => {
      if (message?.type === 'sample') this.waiters.shift()?.(message);
    });
  }

  static async start(options: AgentProcessOptions): Promise<AgentProcess> {
    const metricsPort = await freePort();
    const args = [
      ...(options.nodeFlags ?? []),
      '--import',
      options.build.probe,
      options.build.main,
      ...agentBusArgs(options.transport ?? 'websocket', { ...options, serviceUrl: options.serviceUrl ?? '' }),
      '--concurrency',
      String(options.concurrency),
      '--metrics-port',
      String(metricsPort),
      '--config-request-queue',
      options.configQueues.request,
      '--config-response-queue',
      options.configQueues.response,
      '--config-push-queue',
      options.configQueues.push,
      '--config-timeout',
      '60',
      '--request-timeout',
      '30',
      '--shutdown-grace',
      '5',
      '--log-level',
      'info',
      ...(options.args ?? []),
    ];
    const fd = openSync(options.logFile, 'a');
    const [command, commandArgs] = options.cpus === undefined ? [process.execPath, args] : ['taskset', ['-c', options.cpus, process.execPath, ...args]];
    // taskset execs node: the child's pid and IPC channel are the agent's.
    const child = spawn(command, commandArgs, {
      stdio: ['ignore', fd, fd, 'ipc'],
      env: { ...process.env, ...(options.env ?? {}) },
      // A session of its own is an autogroup of its own; the IPC channel still ends it with this process.
      detached: options.groupNice !== undefined,
    });
    closeSync(fd);
    if (options.groupNice !== undefined && child.pid !== undefined) writeFileSync(`/proc/${child.pid}/autogroup`, String(options.groupNice));
    const agent = new AgentProcess(child, metricsPort, options.logFile);
    return agent;
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Event-loop, memory and CPU readings from inside the agent. */
  sample(options: { reset?: boolean; gc?: boolean } = {}): Promise<ProbeSample> {
    if (!this.running) return Promise.reject(new Error('the agent process is not running'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the agent probe did not answer within 10 s')), 10_000);
      this.waiters.push((sample) => {
        clearTimeout(timer);
        resolve(sample);
      });
      this.child.send({ type: 'sample', ...options });
    });
  }

  memory(): ProcessMemory {
    return processMemory(this.pid);
  }

  async get(path: string): Promise<{ status: number; text: string }> {
    const response = await fetch(`http://127.0.0.1:${this.metricsPort}${path}`, { signal: AbortSignal.timeout(10_000) });
    return { status: response.status, text: await response.text() };
  }

  /** Waits for `/readyz` to answer 200 (configuration loaded, flows subscribed). */
  // A bound for an agent that never gets ready: on a busy machine a new consumer group on a Kafka cluster took over a minute to join.
  async waitReady(timeoutMs = 180_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let last = 'no answer yet';
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`the agent exited before it was ready; see ${this.logFile}`);
      try {
        const { status, text } = await this.get('/readyz');
        if (status === 200) return text;
        last = `${status} ${text}`;
      } catch (error) {
        last = error instanceof Error ? error.message : String(error);
      }
      await sleep(100);
    }
    throw new Error(`the agent was not ready within ${timeoutMs} ms (${last}); see ${this.logFile}`);
  }

  /** The config version the agent has applied (from `/readyz`), or -1. */
  async configVersion(): Promise<number> {
    try {
      const { text } = await this.get('/readyz');
      return Number(/config version (\d+)/.exec(text)?.[1] ?? -1);
    } catch {
      return -1;
    }
  }

  /** `name` → summed value of every series of a metric family in `/metrics` (e.g. `x_sum`, `x_count`). */
  async metrics(names: readonly string[]): Promise<Record<string, number>> {
    const { text } = await this.get('/metrics');
    const out: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
    for (const line of text.split('\n')) {
      if (line.startsWith('#')) continue;
      const name = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line)?.[1];
      if (name && name in out) out[name] = (out[name] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
    }
    return out;
  }

  /** Send the agent a signal (bench:faults: SIGKILL a replica, SIGSTOP and SIGCONT one). */
  signal(name: NodeJS.Signals): void {
    if (this.running) this.child.kill(name);
  }

  /** SIGTERM (graceful stop), SIGKILL after `timeoutMs`. */
  async stop(timeoutMs = 15_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.running) this.child.kill('SIGTERM');
    const timer = setTimeout(() => {
      if (this.running) this.child.kill('SIGKILL');
    }, timeoutMs);
    const result = await this.exited;
    clearTimeout(timer);
    return result;
  }
}

export interface ReplicaOptions extends Omit<AgentProcessOptions, 'webSocketUrl' | 'serviceUrl' | 'kafkaBootstrapServers' | 'rabbitmqUrl' | 'transport' | 'logFile'> {
  broker: BenchBrokerAddress;
  transport: BenchTransportKind;
  /** The log file of replica `i`. */
  logFile: (i: number) => string;
}

/**
 * `count` replicas of the agent on one broker and transport, pushed into `into` as each starts (so the caller's
 * cleanup stops those that did when a later one fails); resolves once every one is ready.
 */
export async function startReplicas(count: number, options: ReplicaOptions, into: AgentProcess[]): Promise<void> {
  const { broker, logFile, ...rest } = options;
  for (let i = 0; i < count; i++) {
    const { webSocketUrl, serviceUrl, kafkaBootstrapServers, rabbitmqUrl } = broker;
    into.push(await AgentProcess.start({ ...rest, webSocketUrl, serviceUrl, kafkaBootstrapServers, rabbitmqUrl, logFile: logFile(i) }));
  }
  await Promise.all(into.map((agent) => agent.waitReady()));
}

/** Starts the floor's echo process and waits until it is subscribed. */
export async function startEcho(
  build: AgentBuild,
  broker: BenchBrokerAddress,
  transport: BenchTransportKind,
  requestTopic: string,
  responseTopic: string,
  logFile: string,
): Promise<{ pid: number; stop(): Promise<void> }> {
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, [build.echo], {
    stdio: ['ignore', fd, fd, 'ipc'],
    env: {
      ...process.env,
      TG_BENCH_BROKER: JSON.stringify({ webSocketUrl: broker.webSocketUrl, serviceUrl: broker.serviceUrl, kafkaBootstrapServers: broker.kafkaBootstrapServers, rabbitmqUrl: broker.rabbitmqUrl }),
      TG_BENCH_TRANSPORT: transport,
      TG_BENCH_REQUEST_TOPIC: requestTopic,
      TG_BENCH_RESPONSE_TOPIC: responseTopic,
    },
  });
  closeSync(fd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the echo process did not start; see ${logFile}`)), 30_000);
    child.once('message', () => {
      clearTimeout(timer);
      resolve();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the echo process exited (${code}); see ${logFile}`));
    });
  });
  return {
    pid: child.pid ?? -1,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface ConfigProcess {
  readonly pid: number;
  /** Size of the `getvalues tool` answer, bytes. */
  readonly payloadBytes: number;
  /** Change the tools as `kind` says (see config-process.ts), bump the version, push; resolves once the push is published. */
  reload(kind?: ReloadKind): Promise<ReloadedMessage>;
  stop(): Promise<void>;
}

/** Starts the reload benchmark's config service (bench/support/config-process.ts) and waits until it serves. */
export async function startConfigProcess(build: AgentBuild, init: Omit<InitMessage, 'type'>, logFile: string): Promise<ConfigProcess> {
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, [build.config], { stdio: ['ignore', fd, fd, 'ipc'] });
  closeSync(fd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const waiters: ((message: ReloadedMessage) => void)[] = [];
  const ready = await new Promise<{ payloadBytes: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the config process did not start; see ${logFile}`)), 120_000);
    child.on('message', (message: { type: string; payloadBytes?: number }) => {
      if (message.type === 'ready') {
        clearTimeout(timer);
        resolve({ payloadBytes: message.payloadBytes ?? 0 });
      } else if (message.type === 'reloaded') {
        waiters.shift()?.(message as unknown as ReloadedMessage);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the config process exited (${code}); see ${logFile}`));
    });
    child.send({ type: 'init', ...init });
  });
  return {
    pid: child.pid ?? -1,
    payloadBytes: ready.payloadBytes,
    reload: (kind?: ReloadKind) =>
      new Promise<ReloadedMessage>((resolve) => {
        waiters.push(resolve);
        child.send({ type: 'reload', kind });
      }),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
