/**
 * Every broker benchmark (each run spawns tsx: a timeout of its own that only catches a hang) prints its usage on
 * `--help` and stops on a flag its usage does not name. The runs are child processes that wait mostly on loading
 * modules, so the file runs them concurrently.
 */
import { execFile } from 'node:child_process';
import { describe, it } from 'vitest';

const BENCHES = ['iteration', 'reload', 'scale-out', 'flood', 'workflow-checks', 'replay-memory', 'growth'];

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

const run = (bench: string, ...args: string[]): Promise<Run> =>
  new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', `bench/${bench}.ts`, ...args], { encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      const status = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      resolve({ status, stdout, stderr });
    });
  });

describe.concurrent.each(BENCHES)('bench/%s.ts', (bench) => {
  it('prints its usage with --help, starting nothing', async ({ expect }) => {
    const help = await run(bench, '--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/npm run bench:/);
    expect(help.stdout).toMatch(/Flags:/);
  }, 90_000);

  it('refuses a misspelt flag, naming it and the known ones', async ({ expect }) => {
    const wrong = await run(bench, '--max-laod', '2');
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toMatch(/^unknown flag --max-laod; known: .*--json/);
    expect(wrong.stdout).toBe('');
  }, 90_000);
});

describe.concurrent.each(['chart', 'faults', 'filter', 'flood', 'growth', 'image-start', 'iteration', 'reload', 'replay-memory', 'scale-out', 'workflow-checks'])('bench/%s.ts --help', (bench) => {
  it('says how long a run takes and what it needs, within 100 columns', async ({ expect }) => {
    const help = await run(bench, '--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Takes about \d+ min/m);
    expect(help.stdout).toMatch(/^Needs: /m);
    expect(help.stdout.split('\n').filter((line: string) => line.length > 100)).toEqual([]);
  }, 90_000);
});
