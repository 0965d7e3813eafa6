/**
 * The per-file timing table of a test run (docs/testing.md), from the JSON reports vitest writes with
 * `--reporter=json --outputFile.json=<file>`. Each row is one test file: its run time as vitest reports it (its
 * tests and hooks, the figure its default reporter prints beside the file; not the file's import), its tests, and
 * its share of its project's file time. Prints Markdown. A file not ending in `.json` is read as the output of
 * vitest's default reporter (a CI log, `.ci/run`'s included), from the line it prints for each file.
 *
 *   npx tsx scripts/test-timings.ts test-results/unit.json test-results/integration.json
 *   npx tsx scripts/test-timings.ts ci.log
 *   npx tsx scripts/test-timings.ts --run     (npm run test:timed: the unit project, then, if it passed, the
 *                                              integration project, each writing its report; then the table;
 *                                              exits as the runs did)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';

interface JsonReport {
  readonly startTime: number;
  readonly numTotalTests: number;
  readonly testResults: readonly {
    readonly name: string;
    readonly startTime: number;
    readonly endTime: number;
    readonly status: string;
    /** Why the file failed outside its tests (an error in a hook or at import). */
    readonly message?: string;
    readonly assertionResults: readonly { readonly status: string; readonly fullName?: string; readonly failureMessages?: readonly string[] }[];
  }[];
}

interface FileTime {
  readonly file: string;
  readonly project: string;
  readonly seconds: number;
  readonly tests: number;
  readonly failed: number;
}

function filesOf(report: JsonReport): FileTime[] {
  return report.testResults.map((result) => {
    const file = relative(process.cwd(), result.name);
    return {
      file,
      project: file.startsWith('test/integration/') ? 'integration' : 'unit',
      seconds: (result.endTime - result.startTime) / 1000,
      tests: result.assertionResults.length,
      failed: result.assertionResults.filter((a) => a.status === 'failed').length,
    };
  });
}

/** One project's files as one source read them, and, from a JSON report, its time from start to end. */
interface ProjectRun {
  readonly project: string;
  readonly files: readonly FileTime[];
  readonly wallSeconds?: number;
}

function runsOfReport(report: JsonReport): ProjectRun[] {
  const files = filesOf(report);
  const ends = report.testResults.map((r) => r.endTime);
  const wallSeconds = ends.length === 0 ? 0 : (Math.max(...ends) - report.startTime) / 1000;
  return [{ project: files[0]?.project ?? 'unit', files, wallSeconds }];
}

/** vitest's default reporter prints each file as ` ✓  unit  test/x.test.ts (3 tests | 1 failed) 120ms`. */
const FILE_LINE = /^ (?:✓|❯|×) +(\S+) +(test\/\S+) \((\d+) tests?(?: \| (\d+) failed)?[^)]*\) (\d+(?:\.\d+)?)(ms|s)\b/;

function runsOfLog(text: string): ProjectRun[] {
  const byProject = new Map<string, FileTime[]>();
  for (const line of text.replace(/\x1b\[[0-9;]*m/g, '').split('\n')) {
    const m = FILE_LINE.exec(line);
    if (m === null) continue;
    const [, project, file, tests, failed, amount, unit] = m as unknown as [string, string, string, string, string | undefined, string, string];
    const seconds = Number(amount) / (unit === 'ms' ? 1000 : 1);
    byProject.set(project, [...(byProject.get(project) ?? []), { file, project, seconds, tests: Number(tests), failed: Number(failed ?? 0) }]);
  }
  return [...byProject].map(([project, files]) => ({ project, files }));
}

/** Run each project in turn (stopping at the first that fails), each writing its JSON report; the exit status. */
function runProjects(projects: readonly string[]): { status: number; reports: string[] } {
  const reports: string[] = [];
  for (const project of projects) {
    const report = `test-results/${project}.json`;
    const run = spawnSync(
      'npx',
      ['vitest', 'run', '--project', project, '--reporter=default', '--reporter=json', `--outputFile.json=${report}`],
      { stdio: 'inherit' },
    );
    if (existsSync(report)) reports.push(report);
    if (run.status !== 0) return { status: run.status ?? 1, reports };
  }
  return { status: 0, reports };
}

const running = process.argv[2] === '--run';
const run = running ? runProjects(['unit', 'integration']) : { status: 0, reports: process.argv.slice(2) };
const runs = run.reports.flatMap((path) => {
  const text = readFileSync(path, 'utf8');
  return path.endsWith('.json') ? runsOfReport(JSON.parse(text) as JsonReport) : runsOfLog(text);
});
if (runs.length === 0) {
  console.error('usage: tsx scripts/test-timings.ts <vitest JSON report or log>... | --run');
  process.exit(running ? run.status : 2);
}
/** What failed, one line each: printed last, so that the tail of a CI log says it. */
function failuresOf(report: JsonReport): string[] {
  return report.testResults.flatMap((result) => {
    const file = relative(process.cwd(), result.name);
    const tests = result.assertionResults
      .filter((a) => a.status === 'failed')
      .map((a) => `- FAILED ${file} › ${a.fullName ?? '(unnamed)'}: ${firstLine(a.failureMessages?.[0])}`);
    if (tests.length === 0 && result.status === 'failed') return [`- FAILED ${file}: ${firstLine(result.message)}`];
    return tests;
  });
}

function firstLine(text: string | undefined): string {
  const line = (text ?? 'no message').replace(/\x1b\[[0-9;]*m/g, '').split('\n').find((l) => l.trim() !== '') ?? 'no message';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

const failures = run.reports.filter((path) => path.endsWith('.json')).flatMap((path) => failuresOf(JSON.parse(readFileSync(path, 'utf8')) as JsonReport));
const files = runs.flatMap((r) => r.files).sort((a, b) => b.seconds - a.seconds);
const byProject = new Map<string, number>();
for (const f of files) byProject.set(f.project, (byProject.get(f.project) ?? 0) + f.seconds);

const lines = ['| # | file | project | tests | seconds | share of its project |', '|---:|---|---|---:|---:|---:|'];
for (const [i, f] of files.entries()) {
  const share = (100 * f.seconds) / (byProject.get(f.project) ?? 1);
  const failed = f.failed > 0 ? ` (${f.failed} failed)` : '';
  lines.push(`| ${i + 1} | \`${f.file}\` | ${f.project} | ${f.tests}${failed} | ${f.seconds.toFixed(1)} | ${share.toFixed(1)} % |`);
}
lines.push('');
for (const r of runs) {
  const tests = r.files.reduce((sum, f) => sum + f.tests, 0);
  const wall = r.wallSeconds === undefined ? '' : `, ${r.wallSeconds.toFixed(0)} s from start to end`;
  lines.push(`- ${r.project}: ${r.files.length} files, ${tests} tests${wall} (file times add up to ${(byProject.get(r.project) ?? 0).toFixed(0)} s)`);
}
if (failures.length > 0) lines.push('', ...failures);
else if (run.status !== 0) lines.push('', `- FAILED: vitest exited with ${run.status} and no test failed (an error outside the tests: see its output above)`);
console.log(lines.join('\n'));
process.exitCode = run.status;
