/**
 * The per-file timing table of a test run (docs/testing.md), from the JSON reports vitest writes with
 * `--reporter=json --outputFile.json=<file>`. Each row is one test file: its run time as vitest reports it (its
 * tests and hooks, the figure its default reporter prints beside the file; not the file's import), its tests, and
 * its share of its project's file time. Prints Markdown.
 *
 *   npx tsx scripts/test-timings.ts test-results/unit.json test-results/integration.json
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
    readonly assertionResults: readonly { readonly status: string }[];
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

/** From the first file's start to the last file's end. */
function wallSeconds(report: JsonReport): number {
  const ends = report.testResults.map((r) => r.endTime);
  return ends.length === 0 ? 0 : (Math.max(...ends) - report.startTime) / 1000;
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
const reports = run.reports.map((path) => JSON.parse(readFileSync(path, 'utf8')) as JsonReport);
if (reports.length === 0) {
  console.error('usage: tsx scripts/test-timings.ts <vitest JSON report>... | --run');
  process.exit(running ? run.status : 2);
}
const files = reports.flatMap(filesOf).sort((a, b) => b.seconds - a.seconds);
const byProject = new Map<string, number>();
for (const f of files) byProject.set(f.project, (byProject.get(f.project) ?? 0) + f.seconds);

const lines = ['| # | file | project | tests | seconds | share of its project |', '|---:|---|---|---:|---:|---:|'];
for (const [i, f] of files.entries()) {
  const share = (100 * f.seconds) / (byProject.get(f.project) ?? 1);
  const failed = f.failed > 0 ? ` (${f.failed} failed)` : '';
  lines.push(`| ${i + 1} | \`${f.file}\` | ${f.project} | ${f.tests}${failed} | ${f.seconds.toFixed(1)} | ${share.toFixed(1)} % |`);
}
lines.push('');
for (const [i, report] of reports.entries()) {
  const project = filesOf(report)[0]?.project ?? `report ${i + 1}`;
  lines.push(`- ${project}: ${report.testResults.length} files, ${report.numTotalTests} tests, ${wallSeconds(report).toFixed(0)} s from start to end (file times add up to ${(byProject.get(project) ?? 0).toFixed(0)} s)`);
}
console.log(lines.join('\n'));
process.exitCode = run.status;
