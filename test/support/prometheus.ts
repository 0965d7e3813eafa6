/**
 * The real Prometheus in tests: Debian's `prometheus` package (`apt-get install prometheus`; `.ci/run` installs
 * it) gives `promtool` (rule and config checks, rule unit tests) and the `prometheus` server, which an
 * integration test starts on a free port with its data in a temporary directory to scrape the agent.
 *
 * Under CI=true the binaries are required: a test that needs one fails when it is missing instead of skipping.
 * `PROMTOOL` / `PROMETHEUS` name other binaries.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../dev/ports.js';

export type PrometheusBinary = 'promtool' | 'prometheus';

/** Whether missing Prometheus binaries fail the tests (CI) or skip them (a developer machine without them). */
export const PROMETHEUS_REQUIRED = process.env.CI === 'true';

/** The binary's path when it runs (`--version` answers), else undefined. */
export function prometheusBinary(name: PrometheusBinary): string | undefined {
  const path = process.env[name.toUpperCase()] ?? name;
  const probe = spawnSync(path, ['--version'], { encoding: 'utf8' });
  return probe.status === 0 ? path : undefined;
}

/** The binary, or an error that says how to install it. */
export function requirePrometheusBinary(name: PrometheusBinary): string {
  const path = prometheusBinary(name);
  if (path) return path;
  throw new Error(
    `${name} is not installed (or ${name.toUpperCase()} does not name a working binary): ` +
      `apt-get install prometheus (Debian's package has promtool and prometheus; .ci/run installs it)`,
  );
}

/** Run promtool; its combined output and exit status. */
export function promtool(args: string[], cwd: string): { status: number | null; output: string } {
  const result = spawnSync(requirePrometheusBinary('promtool'), args, { cwd, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

export interface PromQueryResult {
  resultType: string;
  result: { metric: Record<string, string>; value?: [number, string] }[];
}

export interface PrometheusRule {
  name: string;
  type: 'alerting' | 'recording';
  health: 'ok' | 'err' | 'unknown';
  lastError?: string;
  lastEvaluation: string;
}

export interface PrometheusServer {
  readonly url: string;
  /** An instant query through `/api/v1/query`; throws on an API error (bad PromQL, ...). */
  query(expr: string): Promise<PromQueryResult>;
  /** Every rule of every group loaded, from `/api/v1/rules`. */
  rules(): Promise<PrometheusRule[]>;
  /** Poll `check` (every 200 ms) until it returns true; fails after `timeoutMs` naming `what`. */
  until(check: () => Promise<boolean>, what: string, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export interface PrometheusOptions {
  /** prometheus.yml, as YAML text; `files` are written beside it (e.g. rule files it names). */
  config: string;
  files?: Record<string, string>;
}

/** Start `prometheus` with this config; resolves once `/-/ready` answers. */
export async function startPrometheus(options: PrometheusOptions): Promise<PrometheusServer> {
  const binary = requirePrometheusBinary('prometheus');
  const dir = mkdtempSync(join(tmpdir(), 'tg-agent-prometheus-'));
  writeFileSync(join(dir, 'prometheus.yml'), options.config);
  for (const [name, text] of Object.entries(options.files ?? {})) writeFileSync(join(dir, name), text);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString('utf8')).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };

  const until = async (check: () => Promise<boolean>, what: string, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    let lastError = '';
    for (;;) {
      if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}) while waiting for ${what}:\n${log}`);
      const done = await check().catch((error: unknown) => {
        lastError = error instanceof Error ? error.message : String(error);
        return false;
      });
      if (done) return;
      if (Date.now() > deadline) {
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${lastError})` : ''}; prometheus log:\n${log}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  const api = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${url}${path}`);
    const body = (await response.json()) as { status: string; data?: T; error?: string; errorType?: string };
    if (body.status !== 'success') throw new Error(`GET ${path}: ${body.errorType ?? response.status}: ${body.error ?? 'no error text'}`);
    return body.data as T;
  };

  try {
    await until(async () => (await fetch(`${url}/-/ready`)).ok, 'prometheus to be ready', 60_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url,
    query: (expr) => api<PromQueryResult>(`/api/v1/query?query=${encodeURIComponent(expr)}`),
    rules: async () => {
      const data = await api<{ groups: { rules: PrometheusRule[] }[] }>('/api/v1/rules');
      return data.groups.flatMap((group) => group.rules);
    },
    until,
    stop,
  };
}
