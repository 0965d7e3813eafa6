/**
 * Every broker benchmark (each run spawns tsx: a timeout of its own that only catches a hang) prints its usage on
 * `--help` and stops on a flag its usage does not name. The runs are child processes that wait mostly on loading
 * modules, so the file runs them concurrently; each benchmark's `--help` runs once and serves every test that reads
 * it. On a loaded machine (load 30 on 2 cores) a tsx start took over 60 s: the timeouts only catch a hang.
 */
import { execFile } from 'node:child_process';
import { describe, it } from 'vitest';

const BENCHES = ['iteration', 'reload', 'scale-out', 'flood', 'workflow-checks', 'replay-memory', 'growth'];

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

const RUN_TIMEOUT_MS = 240_000;
const TEST_TIMEOUT_MS = 300_000;

const run = (bench: string, ...args: string[]): Promise<Run> =>
  new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', `bench/${bench}.ts`, ...args], { encoding: 'utf8', timeout: RUN_TIMEOUT_MS }, (error, stdout, stderr) => {
      const status = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      resolve({ status, stdout, stderr });
    });
  });

const helps = new Map<string, Promise<Run>>();
/** `bench/<bench>.ts --help`, run once per benchmark. */
function help(bench: string): Promise<Run> {
  let running = helps.get(bench);
  if (!running) {
    running = run(bench, '--help');
    helps.set(bench, running);
  }
  return running;
}

describe.concurrent.each(BENCHES)('bench/%s.ts', (bench) => {
  it('prints its usage with --help, starting nothing', async ({ expect }) => {
    const usage = await help(bench);
    expect(usage.status).toBe(0);
    expect(usage.stdout).toMatch(/npm run bench:/);
    expect(usage.stdout).toMatch(/Flags:/);
  }, TEST_TIMEOUT_MS);

  it('refuses a misspelt flag, naming it and the known ones', async ({ expect }) => {
    const wrong = await run(bench, '--max-laod', '2');
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toMatch(/^unknown flag --max-laod; known: .*--json/);
    expect(wrong.stdout).toBe('');
  }, TEST_TIMEOUT_MS);
});

describe.concurrent.each(['chart', 'faults', 'filter', 'flood', 'growth', 'image-start', 'iteration', 'reload', 'replay-memory', 'scale-out', 'workflow-checks'])('bench/%s.ts --help', (bench) => {
  it('says how long a run takes and what it needs, within 100 columns', async ({ expect }) => {
    const usage = await help(bench);
    expect(usage.status).toBe(0);
    expect(usage.stdout).toMatch(/^Takes about \d+ min/m);
    expect(usage.stdout).toMatch(/^Needs: /m);
    expect(usage.stdout.split('\n').filter((line: string) => line.length > 100)).toEqual([]);
  }, TEST_TIMEOUT_MS);
});
