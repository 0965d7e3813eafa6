/**
 * A dedicated local Pulsar broker that a test can stop and start again on the same ports (broker-loss
 * tests). It is never the shared broker of the integration run: it always comes from the local launcher
 * `tools/pulsar-standalone/pulsar.sh` (Java 17+ and Maven), on two free loopback ports of its own, whatever
 * `PULSAR_URL` or Docker say. Each start uses a fresh data dir (the launcher's design); the tenant `tg` and
 * its namespaces are created again by the launcher before it reports ready, so non-persistent TrustGraph
 * topics behave as after a real broker restart.
 *
 * The launcher's watchdog (`PULSAR_WATCH_PID`) stops the broker if this process dies without `close()`.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LAUNCHER = resolve(REPO_ROOT, 'tools', 'pulsar-standalone', 'pulsar.sh');
/** Start (classpath cached) and readiness; the launcher itself waits up to 180 s. */
const LAUNCHER_TIMEOUT_MS = 240_000;

export interface RestartableBroker {
  /** `ws://127.0.0.1:<web port>` */
  readonly webSocketUrl: string;
  /** `http://127.0.0.1:<web port>` */
  readonly webServiceUrl: string;
  readonly webPort: number;
  readonly brokerPort: number;
  /** `pulsar://127.0.0.1:<broker port>` (binary protocol). */
  readonly serviceUrl: string;
  /** True between a successful `start()` and the next `stop()`. */
  readonly running: boolean;
  /** Freeze the broker's JVM (SIGSTOP): connections stay open, nothing is answered. */
  pause(): void;
  /** Let a paused broker run again (SIGCONT). */
  resume(): void;
  /** Stop the broker process (SIGTERM, then SIGKILL after 30 s). Safe when already stopped. */
  stop(): Promise<void>;
  /**
   * Kill the broker process at once (SIGKILL), as a crash does: its connections drop, nothing is unloaded.
   * A broker stopped with SIGTERM unloads its topics first and takes reconnects meanwhile, so what a client
   * publishes in that moment can be lost when it exits (docs/reliability.md); a test that must see every
   * conversation end crashes the broker instead. Safe when already stopped.
   */
  crash(): Promise<void>;
  /** Start it again on the same ports; resolves once it is ready. */
  start(): Promise<void>;
  /** Stop it for good (idempotent); call in afterAll. */
  close(): Promise<void>;
  /** With `auth: 'token'`: a token the broker accepts (made for this broker's secret key, per start). */
  readonly token: string | undefined;
}

export interface RestartableBrokerOptions {
  /** `token`: token authentication with a secret key made per start (pulsar.sh PULSAR_AUTH=token). */
  auth?: 'none' | 'token';
  /** False: only take the ports; the broker starts at the first `start()` (a broker that comes up late). Default true. */
  started?: boolean;
}

export async function startRestartableBroker(options: RestartableBrokerOptions = {}): Promise<RestartableBroker> {
  const webPort = await freePort();
  let brokerPort = await freePort();
  while (brokerPort === webPort) brokerPort = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PULSAR_WEB_PORT: String(webPort),
    PULSAR_BROKER_PORT: String(brokerPort),
    PULSAR_BOOKIE_PORT: '0',
    PULSAR_AUTH: options.auth ?? 'none',
  };
  delete env.PULSAR_URL;
  delete env.PULSAR_WEB_URL;
  let running = false;
  let closed = false;
  let paused = false;
  const signal = (name: 'SIGSTOP' | 'SIGCONT'): void => {
    const pid = brokerPid(webPort);
    if (pid === undefined) throw new Error(`no running dedicated broker on web port ${webPort} to send ${name} to`);
    process.kill(pid, name);
    paused = name === 'SIGSTOP';
  };
  let token: string | undefined;

  const broker: RestartableBroker = {
    webSocketUrl: `ws://127.0.0.1:${webPort}`,
    webServiceUrl: `http://127.0.0.1:${webPort}`,
    serviceUrl: `pulsar://127.0.0.1:${brokerPort}`,
    webPort,
    brokerPort,
    pause: () => signal('SIGSTOP'),
    resume: () => signal('SIGCONT'),
    get running() {
      return running;
    },
    get token() {
      return token;
    },
    async start() {
      if (closed) throw new Error('the dedicated broker is closed');
      if (running) return;
      const output = await runLauncher('start', { ...env, PULSAR_WATCH_PID: String(process.pid) });
      token = /^PULSAR_TOKEN=(.+)$/m.exec(output)?.[1];
      running = true;
    },
    async stop() {
      if (paused) signal('SIGCONT');
      running = false;
      await runLauncher('stop', env);
    },
    async crash() {
      const pid = brokerPid(webPort);
      if (pid !== undefined) {
        process.kill(pid, 'SIGKILL');
        paused = false;
        while (brokerPid(webPort) === pid) await new Promise((r) => setTimeout(r, 50));
      }
      await broker.stop();
    },
    async close() {
      if (closed) return;
      closed = true;
      await broker.stop();
    },
  };
  if (options.started === false) return broker;
  try {
    await broker.start();
  } catch (error) {
    await broker.close().catch(() => undefined);
    throw error;
  }
  return broker;
}

/** The java process the launcher started for this web port (its state file), checked to be our broker. */
function brokerPid(webPort: number): number | undefined {
  let state: string;
  try {
    state = readFileSync(resolve(REPO_ROOT, '.pulsar', `broker-${webPort}.state`), 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number(/^PID=(\d+)$/m.exec(state)?.[1]);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('PulsarStandaloneStarter')) return undefined;
  } catch {
    return undefined;
  }
  return pid;
}

/** Resolves with the launcher's output. */
function runLauncher(command: 'start' | 'stop', env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', [LAUNCHER, command], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`pulsar.sh ${command} timed out after ${LAUNCHER_TIMEOUT_MS / 1000} s\n${output}`));
    }, LAUNCHER_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`could not run ${LAUNCHER}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolvePromise(output);
      else
        reject(
          new Error(
            `pulsar.sh ${command} failed (${signal ? `signal ${signal}` : `exit code ${code}`}); a dedicated broker ` +
              `needs Java 17+ and Maven (tools/pulsar-standalone/)\n--- output ---\n${output.trimEnd()}`,
          ),
        );
    });
  });
}

