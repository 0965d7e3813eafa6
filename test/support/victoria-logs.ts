/**
 * VictoriaLogs (Apache-2.0) as the Loki-compatible server of the tests: it accepts Loki's push API at
 * `/insert/loki/api/v1/push` and answers LogsQL queries, where a Loki stream's labels are stream fields
 * (`{processor="agent-manager"}`). Built or found by scripts/victoria-logs.sh; one server per test file, on a
 * free port with a fresh data directory, stopped by close().
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '../../dev/ports.js';

const SCRIPT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'scripts', 'victoria-logs.sh');

export interface VictoriaLogs {
  /** Where a Loki client pushes: `http://127.0.0.1:<port>/insert/loki/api/v1/push`. */
  readonly lokiPushUrl: string;
  /** Every stored entry matching a LogsQL query, as VictoriaLogs returns them (one object per entry). */
  query(logsql: string): Promise<Record<string, string>[]>;
  close(): Promise<void>;
}

/** With `basicAuth`, every endpoint (pushes and queries alike) requires that user and password. */
export async function startVictoriaLogs(options: { basicAuth?: { username: string; password: string } } = {}): Promise<VictoriaLogs> {
  const { stdout } = await promisify(execFile)('bash', [SCRIPT], { timeout: 10 * 60_000 }).catch((error: unknown) => {
    throw new Error(`scripts/victoria-logs.sh could not build VictoriaLogs:\n${(error as { stderr?: string }).stderr ?? String(error)}`, { cause: error });
  });
  const binary = stdout.trim().split('\n').at(-1) ?? '';
  const port = await freePort();
  const data = await mkdtemp(join(tmpdir(), 'victoria-logs-'));
  const auth = options.basicAuth;
  const authArgs = auth ? [`-httpAuth.username=${auth.username}`, `-httpAuth.password=${auth.password}`] : [];
  const authorization: Record<string, string> = auth ? { authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}` } : {};
  const child = spawn(binary, [`-storageDataPath=${data}`, `-httpListenAddr=127.0.0.1:${port}`, '-loggerLevel=ERROR', ...authArgs], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const base = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 30_000; ; ) {
    if (child.exitCode !== null) throw new Error(`VictoriaLogs exited with ${child.exitCode}: ${stderr}`);
    const healthy = await fetch(`${base}/health`, { headers: authorization }).then((r) => r.ok).catch(() => false);
    if (healthy) break;
    if (Date.now() > deadline) throw new Error(`VictoriaLogs did not answer /health within 30 s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    lokiPushUrl: `${base}/insert/loki/api/v1/push`,
    async query(logsql) {
      const response = await fetch(`${base}/select/logsql/query`, { method: 'POST', headers: authorization, body: new URLSearchParams({ query: logsql }) });
      if (!response.ok) throw new Error(`LogsQL ${logsql}: HTTP ${response.status} ${await response.text()}`);
      return (await response.text())
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, string>);
    },
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(data, { recursive: true, force: true });
    },
  };
}
