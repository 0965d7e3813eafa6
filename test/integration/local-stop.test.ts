/**
 * `npm run local` as a newcomer runs it in a terminal: its own broker (nothing given; the launcher or Docker
 * on free ports, in a directory of its own, so it never meets this run's brokers), the §5.2 workflow asked
 * once, two minutes and more of idling (past the librarian's 120 s, when unsaved documents used to be
 * reported), then Ctrl-C: SIGINT to the whole process group, as a terminal sends it. Nothing it prints may
 * say `Failed`, `reconnect` or `unsaved`; its last line says everything stopped; no process it started is
 * left, nor its local.json.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { waitUntil } from '../support/agent-harness.js';
import { elapsed, explained } from '../support/failure-report.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Past the librarian's 120 s timeout: a document the agent could not save would be reported by then. */
const IDLE_MS = 130_000;

/** The processes whose environment carries this marker: everything `npm run local` started, and their children. */
function processesWith(marker: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(marker)) {
        found.push(`${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ').slice(0, 200)}`);
      }
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

describe('npm run local, stopped with Ctrl-C', () => {
  it('asks the workflow, idles past the librarian timeout, and stops everything quietly, in order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-local-'));
    const marker = `TG_AGENT_LOCAL_DIR=${dir}`;
    const env: NodeJS.ProcessEnv = { ...process.env, TG_AGENT_LOCAL_DIR: dir, TG_AGENT_METRICS_PORT: '0' };
    for (const name of ['PULSAR_URL', 'PULSAR_WEB_URL', 'PULSAR_SERVICE_URL', 'LLM_URL']) delete env[name];
    const local = spawn('npm', ['run', '--silent', 'local'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    local.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    local.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    const exited = once(local, 'exit');
    let asked = '';
    const log = join(dir, 'local-agent.log');
    const report = () => ({
      'npm run local printed': output.split('\n'),
      'npm run ask printed': asked.split('\n'),
      'processes left': processesWith(marker),
      'the agent log, last 30 lines': existsSync(log) ? readFileSync(log, 'utf8').trimEnd().split('\n').slice(-30) : ['(none)'],
    });

    try {
      await explained(async () => {
        // A broker from jars on a loaded machine takes minutes (its first run downloads them: longer still).
        await waitUntil(() => output.includes('agent ready') || local.exitCode !== null, 'npm run local to be ready', 600_000, 500);
        expect(output).toContain('agent ready');
        expect(existsSync(join(dir, 'local.json'))).toBe(true);

        asked = await new Promise<string>((resolve, reject) => {
          execFile(
            'npm',
            ['run', '--silent', 'ask', '--', 'What entities are connected to Company X?', '--group', 'read-only,knowledge,advanced,compute,admin', '--state', 'undefined'],
            { cwd: ROOT, env, timeout: 120_000 },
            (error, stdout, stderr) => (error ? reject(new Error(`npm run ask failed: ${error.message}\n${stdout}${stderr}`)) : resolve(stdout + stderr)),
          );
        });
        expect(asked).toContain('answer     > Here is what I found:');
        expect(asked).toContain('- Reset Workflow: Workflow reset to its initial state');
        await waitUntil(() => output.includes('iteration 4 in state "undefined"'), 'the audit summary of the answer', 10_000);

        await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
        console.log(`${elapsed()} Ctrl-C`);
        process.kill(-local.pid!, 'SIGINT');
        await Promise.race([exited, new Promise((_, reject) => setTimeout(() => reject(new Error('npm run local did not stop within 120 s')), 120_000))]);

        const lines = output.split('\n').filter((line) => line.trim() !== '');
        expect(lines.filter((line) => /Failed|reconnect|unsaved/.test(line))).toEqual([]);
        expect(lines.at(-1)).toBe('[local] everything stopped.');
        // The stop prints at most a few lines: from the stop announcement to the end.
        expect(lines.length - lines.findIndex((line) => line.startsWith('[local] stopping'))).toBeLessThanOrEqual(4);
        await waitUntil(() => processesWith(marker).length === 0, 'every process npm run local started to be gone', 10_000, 200);
        expect(existsSync(join(dir, 'local.json'))).toBe(false);
      }, report);
    } finally {
      if (local.exitCode === null && local.signalCode === null) {
        try {
          process.kill(-local.pid!, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
      rmSync(dir, { recursive: true, force: true });
    }
  }, 900_000);
});
