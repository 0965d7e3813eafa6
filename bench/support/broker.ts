/**
 * The benchmarks' broker: the same real Pulsar 4.0.7 standalone the integration tests use, plus what the
 * benchmarks need to know about it — the broker's process id (for its CPU use) and its version.
 *
 *  - `PULSAR_URL` set: that broker (via dev/broker.ts); its pid is looked up by its listening port
 *    (`ss`), so CPU is reported only when it runs on this machine.
 *  - Otherwise, stock configuration: `startBroker()` (tools/pulsar-standalone/pulsar.sh on free ports).
 *  - Otherwise, with `maxTextFrameBytes` (the reload benchmark): the same launcher and configuration run from
 *    a private copy whose standalone.conf also sets `webSocketMaxTextFrameSize`. A stock broker's WebSocket
 *    service refuses *incoming* frames over 1 MiB, and the benchmark's config service publishes the answer
 *    holding 10 000 tools (~4.6 MiB as a frame) over WebSocket. (TrustGraph's config service publishes with the
 *    native client; the broker delivers large messages to WebSocket consumers such as the agent on a stock
 *    configuration — see docs/benchmarks.md.) The copy reuses the resolved classpath (~/.m2).
 */
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, type BrokerHandle } from '../../dev/broker.js';
import { REPO_ROOT } from './build.js';
import { freePort } from '../../dev/ports.js';
export { freePort };

export interface BenchBroker {
  readonly webSocketUrl: string;
  /** The binary protocol URL (native transport). */
  readonly serviceUrl: string;
  readonly webServiceUrl: string;
  /** The pid of the process listening on the broker's web port (the JVM), when it runs on this machine. */
  readonly pid: number | undefined;
  /** e.g. `4.0.7`. */
  readonly version: string;
  /** `webSocketMaxTextFrameSize` when this module set it; undefined = the broker's (default 1 MiB). */
  readonly maxTextFrameBytes: number | undefined;
  readonly source: string;
  stop(): Promise<void>;
}

export interface BenchBrokerOptions {
  /** Raise the WebSocket service's frame limit (only for a broker this module starts). */
  maxTextFrameBytes?: number;
  log: (line: string) => void;
}

export async function startBenchBroker(options: BenchBrokerOptions): Promise<BenchBroker> {
  const external = (process.env.PULSAR_URL ?? process.env.PULSAR_WEB_URL ?? '').trim() !== '';
  if (external || options.maxTextFrameBytes === undefined) {
    if (external && options.maxTextFrameBytes !== undefined) {
      options.log(
        `PULSAR_URL is set: using that broker; it needs webSocketMaxTextFrameSize >= ${options.maxTextFrameBytes} for this benchmark`,
      );
    }
    const handle = await startBroker();
    return finish(handle, undefined, undefined);
  }
  return startPrivateCopy(options.maxTextFrameBytes, options.log);
}

async function finish(handle: Pick<BrokerHandle, 'webServiceUrl' | 'webSocketUrl' | 'serviceUrl' | 'stop'> & { source: string }, pid: number | undefined, frame: number | undefined): Promise<BenchBroker> {
  let version = 'unknown';
  try {
    const response = await fetch(`${handle.webServiceUrl}/admin/v2/brokers/version`, { signal: AbortSignal.timeout(5000) });
    if (response.ok) version = (await response.text()).replace(/"/g, '').trim();
  } catch {
    // reported as unknown
  }
  const port = Number(new URL(handle.webServiceUrl).port || 80);
  return {
    webSocketUrl: handle.webSocketUrl,
    serviceUrl: handle.serviceUrl,
    webServiceUrl: handle.webServiceUrl,
    // Looked up on every read: whoever listens on the web port now (a state file may name another run's broker).
    get pid() {
      return pidListeningOn(port) ?? pid;
    },
    version,
    maxTextFrameBytes: frame,
    source: handle.source,
    stop: () => handle.stop(),
  };
}

function pidListeningOn(port: number): number | undefined {
  try {
    const out = execFileSync('ss', ['-Hltnp', `sport = :${port}`], { encoding: 'utf8' });
    const pid = Number(/pid=(\d+)/.exec(out)?.[1]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function runLauncher(script: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      output += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`pulsar.sh ${args.join(' ')} failed (exit ${code}):\n${output}`))));
  });
}

async function startPrivateCopy(maxTextFrameBytes: number, log: (line: string) => void): Promise<BenchBroker> {
  const root = mkdtempSync(join(tmpdir(), 'tg-agent-bench-broker-'));
  const source = join(REPO_ROOT, 'tools', 'pulsar-standalone');
  const launcherDir = join(root, 'tools', 'pulsar-standalone');
  mkdirSync(launcherDir, { recursive: true });
  for (const file of ['pulsar.sh', 'pom.xml', 'settings.xml', 'log4j2.xml']) copyFileSync(join(source, file), join(launcherDir, file));
  writeFileSync(
    join(launcherDir, 'standalone.conf'),
    `${readFileSync(join(source, 'standalone.conf'), 'utf8')}\n# bench/support/broker.ts: room for a config response holding 10 000 tools\nwebSocketMaxTextFrameSize=${maxTextFrameBytes}\n`,
  );
  // The resolved classpath (jars in ~/.m2) and node_modules/ws (the launcher's readiness check).
  mkdirSync(join(root, '.pulsar'));
  for (const file of ['classpath.txt', 'classpath.key']) {
    const from = join(REPO_ROOT, '.pulsar', file);
    if (existsSync(from)) copyFileSync(from, join(root, '.pulsar', file));
  }
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');

  const webPort = await freePort();
  let brokerPort = await freePort();
  while (brokerPort === webPort) brokerPort = await freePort();
  const script = join(launcherDir, 'pulsar.sh');
  const env: NodeJS.ProcessEnv = { ...process.env, PULSAR_WEB_PORT: String(webPort), PULSAR_BROKER_PORT: String(brokerPort) };
  log(`starting Pulsar (launcher copy in ${root}, web ${webPort}, broker ${brokerPort}, webSocketMaxTextFrameSize=${maxTextFrameBytes}) ...`);
  let stdout: string;
  try {
    stdout = await runLauncher(script, ['start'], { ...env, PULSAR_WATCH_PID: String(process.pid) });
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  const vars = Object.fromEntries(
    stdout
      .split('\n')
      .map((line) => /^(PULSAR_[A-Z_]+)=(.*)$/.exec(line.trim()))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1]!, m[2]!]),
  );
  const webServiceUrl = vars.PULSAR_WEB_URL ?? `http://127.0.0.1:${webPort}`;
  let stopped: Promise<void> | undefined;
  return finish(
    {
      webServiceUrl,
      webSocketUrl: vars.PULSAR_WS_URL ?? webServiceUrl.replace(/^http/, 'ws'),
      serviceUrl: vars.PULSAR_SERVICE_URL ?? `pulsar://127.0.0.1:${brokerPort}`,
      source: 'launcher (copy with a raised frame limit)',
      stop: () =>
        (stopped ??= runLauncher(script, ['stop'], env)
          .then(() => undefined)
          .finally(() => rmSync(root, { recursive: true, force: true }))),
    },
    vars.PULSAR_PID ? Number(vars.PULSAR_PID) : undefined,
    maxTextFrameBytes,
  );
}
