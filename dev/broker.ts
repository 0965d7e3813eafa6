/**
 * A real Apache Pulsar broker for integration tests.
 *
 * {@link startBroker} picks the first of:
 *  1. `PULSAR_URL` (or `PULSAR_WEB_URL`): an already running broker, given by its web service URL
 *     (`http://host:8080` or `ws://host:8080`). `PULSAR_SERVICE_URL` may name the binary-protocol URL;
 *     otherwise `pulsar://<host>:6650` is assumed. `stop()` leaves that broker alone.
 *  2. A Docker engine, if one answers: `apachepulsar/pulsar:4.0.7` (`PULSAR_IMAGE` overrides) via
 *     testcontainers. An image that cannot be pulled or started (no registry reachable) falls back to 3, saying so.
 *  3. The local launcher `tools/pulsar-standalone/pulsar.sh` (Pulsar from Maven Central jars; needs Java 17+
 *     and Maven). Ports: `PULSAR_WEB_PORT` / `PULSAR_BROKER_PORT`, else free ephemeral ports (never the fixed
 *     8080/6650: two runs on one machine would both take them).
 *
 * `PULSAR_SOURCE=docker` or `PULSAR_SOURCE=launcher` forces one of 2 and 3 (a forced source that fails is an
 * error, not a fallback). In every case the tenant `tg` and namespaces `tg/flow`, `tg/request`, `tg/response`, `tg/notify` exist
 * afterwards (created as TrustGraph's bootstrapper does). No broker is a failure, never a skip.
 */
import { spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.js';

export type BrokerSource = 'env' | 'testcontainers' | 'launcher';

export interface BrokerHandle {
  /** Binary protocol URL, e.g. `pulsar://127.0.0.1:6650`. */
  readonly serviceUrl: string;
  /** Admin REST / web service URL, e.g. `http://127.0.0.1:8080` (no trailing slash). */
  readonly webServiceUrl: string;
  /** WebSocket API base URL, e.g. `ws://127.0.0.1:8080` (append `/ws/v2/...`). */
  readonly webSocketUrl: string;
  /** Where the broker came from. */
  readonly source: BrokerSource;
  /** Which broker that is, in words: the URL given, the Docker image, or the launcher. */
  readonly description: string;
  /** Stops the broker if this process started it; a no-op for `source: 'env'`. Safe to call twice. */
  stop(): Promise<void>;
}

export class BrokerUnavailableError extends Error {
  override readonly name = 'BrokerUnavailableError';
}

const HOW_TO_GET_ONE =
  'Integration tests need a real Pulsar broker. Either install Java 17+ and Maven ' +
  '(apt-get install -y openjdk-17-jre-headless maven) so tools/pulsar-standalone/pulsar.sh can run one from ' +
  'Maven Central jars, or point the tests at a running broker with PULSAR_URL=ws://host:8080 ' +
  '(its web service URL; PULSAR_SERVICE_URL=pulsar://host:6650 optional).';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LAUNCHER = resolve(REPO_ROOT, 'tools', 'pulsar-standalone', 'pulsar.sh');
const DEFAULT_IMAGE = 'apachepulsar/pulsar:4.0.7';
const DOCKER_PROBE_TIMEOUT_MS = 5_000;
/** Resolve (first run downloads ~270 MB) + up to 180 s readiness. */
const LAUNCHER_TIMEOUT_MS = 15 * 60_000;

/** TrustGraph's PulsarTopology initialiser: namespace → policies. */
const TG_NAMESPACES: Readonly<Record<string, object>> = {
  flow: {},
  request: {},
  response: {
    retention_policies: { retentionSizeInMB: -1, retentionTimeInMinutes: 3, subscriptionExpirationTimeMinutes: 30 },
  },
  notify: {
    retention_policies: { retentionSizeInMB: -1, retentionTimeInMinutes: 3, subscriptionExpirationTimeMinutes: 5 },
  },
};

export async function startBroker(env: NodeJS.ProcessEnv = process.env): Promise<BrokerHandle> {
  const fromEnv = brokerFromEnv(env);
  if (fromEnv) {
    await waitForAdmin(fromEnv.webServiceUrl, 30_000).catch((cause: unknown) => {
      throw new BrokerUnavailableError(
        `PULSAR_URL points at ${fromEnv.webServiceUrl}, but its admin API does not answer: ${describeError(cause)}`,
        { cause },
      );
    });
    await ensureTgTopology(fromEnv.webServiceUrl);
    return fromEnv;
  }

  const forced = forcedSource(env.PULSAR_SOURCE);
  if (forced !== 'launcher' && (forced === 'docker' || (await dockerAvailable()))) {
    try {
      return await startWithTestcontainers(env);
    } catch (cause) {
      const why = `a Docker engine answers, but Pulsar's image ${dockerImage(env)} did not start (${describeError(cause)})`;
      if (forced === 'docker') throw new BrokerUnavailableError(`PULSAR_SOURCE=docker: ${why}`, { cause });
      process.stderr.write(`[broker] ${why}; starting Pulsar from Maven Central jars with the local launcher instead\n`);
    }
  }

  return startWithLauncher(env);
}

function forcedSource(raw: string | undefined): 'docker' | 'launcher' | undefined {
  const value = (raw ?? '').trim();
  if (value === '') return undefined;
  if (value === 'docker' || value === 'launcher') return value;
  throw new BrokerUnavailableError(`PULSAR_SOURCE must be docker or launcher, got ${JSON.stringify(value)}`);
}

function dockerImage(env: NodeJS.ProcessEnv): string {
  return env.PULSAR_IMAGE?.trim() || DEFAULT_IMAGE;
}

// ------------------------------------------------------------------------------------------------------
// 1. PULSAR_URL
// ------------------------------------------------------------------------------------------------------

function brokerFromEnv(env: NodeJS.ProcessEnv): BrokerHandle | undefined {
  const raw = (env.PULSAR_URL ?? env.PULSAR_WEB_URL ?? '').trim();
  if (raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch (cause) {
    throw new BrokerUnavailableError(`PULSAR_URL is not a URL: ${JSON.stringify(raw)}`, { cause });
  }
  const secure = url.protocol === 'https:' || url.protocol === 'wss:';
  if (!['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol)) {
    throw new BrokerUnavailableError(
      `PULSAR_URL must be the broker's web service URL (http://host:8080 or ws://host:8080), got ${raw}. ` +
        'Put a pulsar:// URL in PULSAR_SERVICE_URL instead.',
    );
  }
  const hostPort = url.host; // includes a non-default port
  const basePath = url.pathname.replace(/\/+$/, '');
  const webServiceUrl = `${secure ? 'https' : 'http'}://${hostPort}${basePath}`;
  const webSocketUrl = `${secure ? 'wss' : 'ws'}://${hostPort}${basePath}`;
  const serviceUrl =
    env.PULSAR_SERVICE_URL?.trim() || `${secure ? 'pulsar+ssl' : 'pulsar'}://${url.hostname}:${secure ? 6651 : 6650}`;
  return { serviceUrl, webServiceUrl, webSocketUrl, source: 'env', description: `the broker at ${webServiceUrl} (PULSAR_URL)`, stop: async () => {} };
}

// ------------------------------------------------------------------------------------------------------
// 2. testcontainers
// ------------------------------------------------------------------------------------------------------

async function dockerAvailable(): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await withTimeout(getContainerRuntimeClient(), DOCKER_PROBE_TIMEOUT_MS, 'container runtime probe');
    return true;
  } catch {
    return false;
  }
}

async function startWithTestcontainers(env: NodeJS.ProcessEnv): Promise<BrokerHandle> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const image = dockerImage(env);
  const container = await new GenericContainer(image)
    .withCommand(['bin/pulsar', 'standalone', '-nfw', '-nss'])
    .withExposedPorts(6650, 8080)
    .withWaitStrategy(Wait.forHttp('/admin/v2/namespaces/public/default', 8080).forStatusCode(200))
    .withStartupTimeout(180_000)
    .start();
  const host = container.getHost();
  const webHostPort = `${host}:${container.getMappedPort(8080)}`;
  const handle: BrokerHandle = {
    serviceUrl: `pulsar://${host}:${container.getMappedPort(6650)}`,
    webServiceUrl: `http://${webHostPort}`,
    webSocketUrl: `ws://${webHostPort}`,
    source: 'testcontainers',
    description: `${image} in Docker (testcontainers)`,
    stop: once(async () => {
      await container.stop();
    }),
  };
  try {
    await ensureTgTopology(handle.webServiceUrl);
  } catch (error) {
    await handle.stop();
    throw error;
  }
  return handle;
}

// ------------------------------------------------------------------------------------------------------
// 3. tools/pulsar-standalone/pulsar.sh
// ------------------------------------------------------------------------------------------------------

async function startWithLauncher(env: NodeJS.ProcessEnv): Promise<BrokerHandle> {
  const webPort = await choosePort(env.PULSAR_WEB_PORT, 'PULSAR_WEB_PORT');
  const brokerPort = await choosePort(env.PULSAR_BROKER_PORT, 'PULSAR_BROKER_PORT', webPort);
  const launcherEnv: NodeJS.ProcessEnv = {
    ...env,
    PULSAR_WEB_PORT: String(webPort),
    PULSAR_BROKER_PORT: String(brokerPort),
    // The launcher's watchdog stops the broker if this process dies without running stop().
    PULSAR_WATCH_PID: String(process.pid),
  };

  const started = await runLauncher(['start'], launcherEnv).catch((cause: unknown) => {
    throw new BrokerUnavailableError(`Could not start a local Pulsar broker with ${LAUNCHER}.\n${HOW_TO_GET_ONE}`, {
      cause,
    });
  });
  const vars = parseVars(started.stdout);
  const webServiceUrl = vars.PULSAR_WEB_URL ?? `http://127.0.0.1:${webPort}`;
  return {
    serviceUrl: vars.PULSAR_SERVICE_URL ?? `pulsar://127.0.0.1:${brokerPort}`,
    webServiceUrl,
    webSocketUrl: vars.PULSAR_WS_URL ?? webServiceUrl.replace(/^http/, 'ws'),
    source: 'launcher',
    description: 'Pulsar from Maven Central jars (tools/pulsar-standalone/pulsar.sh)',
    stop: once(async () => {
      const { PULSAR_WATCH_PID: _unused, ...stopEnv } = launcherEnv;
      await runLauncher(['stop'], stopEnv);
    }),
  };
}

interface LauncherResult {
  stdout: string;
  stderr: string;
}

export class LauncherError extends Error {
  override readonly name = 'LauncherError';
  constructor(
    message: string,
    readonly output: string,
  ) {
    super(`${message}\n--- pulsar.sh output ---\n${output.trimEnd()}\n--- end of pulsar.sh output ---`);
  }
}

function runLauncher(args: readonly string[], env: NodeJS.ProcessEnv): Promise<LauncherResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', [LAUNCHER, ...args], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      // The broker it starts runs in this process group of its own: a Ctrl-C in the terminal of `npm run
      // local` reaches that script only, which stops the broker last, after the agent.
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    let combined = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      combined += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      combined += chunk;
    });
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new LauncherError(`pulsar.sh ${args.join(' ')} timed out after ${LAUNCHER_TIMEOUT_MS / 1000} s`, combined));
    }, LAUNCHER_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new LauncherError(`could not run bash ${LAUNCHER}: ${error.message}`, combined));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolvePromise({ stdout, stderr });
      else
        reject(
          new LauncherError(
            `pulsar.sh ${args.join(' ')} failed (${signal ? `signal ${signal}` : `exit code ${code}`})`,
            combined,
          ),
        );
    });
  });
}

function parseVars(stdout: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const match = /^(PULSAR_[A-Z_]+)=(.*)$/.exec(line.trim());
    if (match?.[1] !== undefined && match[2] !== undefined) vars[match[1]] = match[2];
  }
  return vars;
}

/** The env value if given; else a free ephemeral port (other than `avoid`). */
async function choosePort(fromEnv: string | undefined, name: string, avoid?: number): Promise<number> {
  if (fromEnv !== undefined && fromEnv.trim() !== '') {
    const port = Number(fromEnv);
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw new BrokerUnavailableError(`${name} must be a port number, got ${JSON.stringify(fromEnv)}`);
    }
    return port;
  }
  for (;;) {
    const port = await freePort();
    if (port !== avoid) return port;
  }
}

// ------------------------------------------------------------------------------------------------------
// admin helpers
// ------------------------------------------------------------------------------------------------------

async function waitForAdmin(webServiceUrl: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${webServiceUrl}/admin/v2/namespaces/public/default`, {
        signal: AbortSignal.timeout(5_000),
      });
      if (response.ok) return;
      last = new Error(`HTTP ${response.status}`);
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 1_000));
  }
  throw last instanceof Error ? last : new Error(String(last));
}

/** Tenant `tg` and its four namespaces, idempotently (PUT answers 409 when they already exist). */
export async function ensureTgTopology(webServiceUrl: string): Promise<void> {
  const clustersResponse = await fetch(`${webServiceUrl}/admin/v2/clusters`, { signal: AbortSignal.timeout(10_000) });
  if (!clustersResponse.ok) {
    throw new BrokerUnavailableError(`GET ${webServiceUrl}/admin/v2/clusters answered HTTP ${clustersResponse.status}`);
  }
  const clusters = (await clustersResponse.json()) as string[];
  await adminPut(`${webServiceUrl}/admin/v2/tenants/tg`, { adminRoles: [], allowedClusters: clusters });
  for (const [namespace, policies] of Object.entries(TG_NAMESPACES)) {
    await adminPut(`${webServiceUrl}/admin/v2/namespaces/tg/${namespace}`, policies);
  }
}

async function adminPut(url: string, body: object): Promise<void> {
  const response = await fetch(url, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  if (response.status !== 204 && response.status !== 409) {
    throw new BrokerUnavailableError(`PUT ${url} answered HTTP ${response.status}: ${await response.text()}`);
  }
}

// ------------------------------------------------------------------------------------------------------
// small utilities
// ------------------------------------------------------------------------------------------------------

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let pending: Promise<void> | undefined;
  return () => (pending ??= fn());
}

function describeError(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (${error.cause.message})` : '';
    return `${error.message}${cause}`;
  }
  return String(error);
}
