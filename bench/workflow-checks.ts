/**
 * How the workflow checks grow with a workspace's tools: the checks alone, and `tg-agent lint` on a dump.
 *
 *   npm run bench:workflow-checks -- --max-load 40
 *
 * Takes about 3 min up to 100 000 tools (plus up to 10 min waiting for the 1-minute load average to
 * drop under --max-load); no broker.
 *
 * Needs: nothing but this checkout.
 *
 * Workspaces of `--tools` (default 1 000, 10 000, 100 000) synthetic tools (bench/support/tools.ts: 20 groups,
 * 8 states) with mistakes seeded in proportion: for every 100 tools, one more has a group of its own one edit
 * from a shared one (a near miss) and another lists only a state no tool leads to; the group policy allows
 * the 20 groups and one no tool has, and its availability rule names that group and a tool that does not
 * exist.
 *
 * The checks alone: each size in a process of its own (node --expose-gc), the registry built first; then
 * `lintWorkflow` to the end (median of 3: wall, and the event-loop thread's CPU, which waiting for a core does
 * not inflate), its memory (the heap's growth while it runs, sampled between its steps, and what its findings
 * keep after a collection), and the checks as the agent runs them (`WorkflowChecks.check`, in time slices):
 * the longest gap between ticks of a 1 ms timer meanwhile.
 *
 * `tg-agent lint`: the compiled command (`node dist/src/main.js lint --file`) on a dump of each size as
 * tg-show-config prints it (`--lint-tools`, default the same sizes and 200 000), timed by /usr/bin/time:
 * wall, CPU, peak resident memory.
 *
 * Flags: --tools 1000,10000,100000  --lint-tools 1000,10000,100000,200000  --max-load 1.5  --json <file>
 *        (--child <tools>: one size of the checks alone, in the process the benchmark starts for it)
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { buildRegistry } from '../src/tools/registry/registry.js';
import { parsePolicy } from '../src/groups/policy.js';
import { WorkflowChecks } from '../src/workflow/workflow-checks.js';
import { lintWorkflow, lintWorkflowSteps } from '../src/workflow/workflow-lint.js';
import { PATTERN_IDS } from '../src/agent/patterns/pattern-table.js';
import { buildAgent } from './support/build.js';
import { benchFlags } from './support/options.js';
import { loadAverage, waitForLowLoad } from './support/proc.js';
import { mainThreadCpuMs } from './support/reload-agent.js';
import { log, writeJson } from './support/run.js';
import { mib, ms, num, quantile, table } from './support/stats.js';
import { GROUPS, syntheticTools } from './support/tools.js';

const run = promisify(execFile);
const flags = benchFlags(import.meta.url);
const sizes = (name: string, fallback: string): number[] => (flags.get(name) ?? fallback).split(',').map(Number);
const TOOLS = sizes('tools', '1000,10000,100000');
const LINT_TOOLS = sizes('lint-tools', '1000,10000,100000,200000');
const MAX_LOAD = Number(flags.get('max-load') ?? 1.5);
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** The synthetic workspace with its seeded mistakes: `tool` values and the group policy's value. */
function workspace(count: number): { tools: Record<string, string>; policy: string } {
  const tools = syntheticTools(count);
  for (let i = 0; i < count; i += 100) {
    const k = i / 100;
    const shared = GROUPS[k % GROUPS.length]!;
    // One character inserted into a shared group: 20 groups × 7 places × 36 characters of distinct near misses.
    const at = 1 + (Math.floor(k / GROUPS.length) % 7);
    const nearMiss = shared.slice(0, at) + ALPHABET[Math.floor(k / (GROUPS.length * 7)) % ALPHABET.length]! + shared.slice(at);
    tools[`tool-${String(i).padStart(6, '0')}-typo`] = JSON.stringify({ type: 'text-completion', name: `typo_${i}`, group: [nearMiss] });
    tools[`tool-${String(i).padStart(6, '0')}-orphan`] = JSON.stringify({ type: 'text-completion', name: `orphan_${i}`, group: [shared], 'applicable-states': [`orphan-${k}`] });
  }
  const always = [{ from: '00:00', to: '24:00' }];
  const policy = JSON.stringify({
    'allowed-groups': [...GROUPS, 'audit'],
    availability: [{ groups: ['audit'], tools: ['tool_1', 'no-such-tool'], windows: always }],
  });
  return { tools, policy };
}

interface ChecksReading {
  tools: number;
  findings: number;
  buildMs: number;
  wallMs: number;
  cpuMs: number;
  heapGrowthBytes: number;
  keptBytes: number;
  longestBlockMs: number;
  slicedMs: number;
}

/** In a child process: one size, measured. */
async function measureChecks(count: number): Promise<ChecksReading> {
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
  const { tools, policy: policyValue } = workspace(count);
  const builtAt = performance.now();
  const { registry } = buildRegistry({ workspace: 'bench', tools, version: 1 });
  const buildMs = performance.now() - builtAt;
  const policy = parsePolicy('bench', { policy: policyValue }, PATTERN_IDS).policy;
  const cpu = mainThreadCpuMs();
  const walls: number[] = [];
  const cpus: number[] = [];
  let findings = 0;
  for (let i = 0; i < 3; i++) {
    gc();
    const [started, startedCpu] = [performance.now(), cpu()];
    findings = lintWorkflow(registry, policy).length;
    walls.push(performance.now() - started);
    cpus.push(cpu() - startedCpu);
  }
  gc();
  const before = process.memoryUsage().heapUsed;
  let peak = before;
  const steps = lintWorkflowSteps(registry, policy);
  let step = steps.next();
  for (let n = 1; !step.done; n++, step = steps.next()) if (n % 256 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
  const kept = step.value;
  gc();
  // A collection can free more of what was there before than the findings take: never below nothing.
  const keptBytes = Math.max(0, process.memoryUsage().heapUsed - before);
  if (kept.length !== findings) throw new Error('the stepped checks found something else');

  const checks = new WorkflowChecks({ logger: pino({ level: 'silent' }), policyOf: () => policy });
  let longest = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last - 1);
    last = now;
  }, 1);
  const slicedAt = performance.now();
  await checks.check(registry);
  const slicedMs = performance.now() - slicedAt;
  clearInterval(timer);
  return { tools: registry.tools.length, findings, buildMs, wallMs: quantile(walls, 0.5), cpuMs: quantile(cpus, 0.5), heapGrowthBytes: peak - before, keptBytes, longestBlockMs: longest, slicedMs };
}

interface LintReading {
  tools: number;
  dumpBytes: number;
  exitCode: number;
  wallSeconds: number;
  cpuSeconds: number;
  maxRssKiB: number;
  outputLines: number;
}

async function measureLint(main: string, count: number, dir: string): Promise<LintReading> {
  const { tools, policy } = workspace(count);
  const dump = `Version: 1\n${JSON.stringify({ tool: tools, 'agent-group-policy': { policy } }, null, 4)}\n`;
  const file = join(dir, `dump-${count}.txt`);
  writeFileSync(file, dump);
  const timing = join(dir, `time-${count}.txt`);
  let stdout = '';
  let exitCode = 0;
  try {
    ({ stdout } = await run('/usr/bin/time', ['-o', timing, '-f', '%e %U %S %M', process.execPath, main, 'lint', '--file', file], { maxBuffer: 1 << 30 }));
  } catch (error) {
    const failed = error as { code?: number; stdout?: string };
    exitCode = failed.code ?? -1;
    stdout = failed.stdout ?? '';
  }
  const [wall, user, system, rss] = readFileSync(timing, 'utf8').trim().split(/\s+/).slice(-4).map(Number) as [number, number, number, number];
  return { tools: count, dumpBytes: Buffer.byteLength(dump), exitCode, wallSeconds: wall, cpuSeconds: user + system, maxRssKiB: rss, outputLines: stdout.split('\n').length };
}

if (flags.has('child')) {
  process.stdout.write(`${JSON.stringify(await measureChecks(Number(flags.get('child'))))}\n`);
  process.exit(0);
}

const loadAtStart = await waitForLowLoad(MAX_LOAD, 10 * 60_000, log);
const checks: ChecksReading[] = [];
for (const count of TOOLS) {
  log(`the checks alone: ${num(count)} tools (load ${loadAverage()})`);
  const script = fileURLToPath(import.meta.url);
  const { stdout } = await run(process.execPath, ['--expose-gc', '--import', 'tsx', script, '--child', String(count)], { maxBuffer: 1 << 26 });
  checks.push(JSON.parse(stdout.trim().split('\n').at(-1)!) as ChecksReading);
}
const build = await buildAgent(log);
const dir = mkdtempSync(join(tmpdir(), 'tg-agent-bench-lint-'));
const lints: LintReading[] = [];
try {
  for (const count of LINT_TOOLS) {
    log(`tg-agent lint: ${num(count)} tools (load ${loadAverage()})`);
    lints.push(await measureLint(build.main, count, dir));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
  build.remove();
}
const perTool = (value: number, tools: number): string => `${((value / tools) * 1000).toFixed(1)} µs`;
console.log(
  [
    `## Workflow checks: ${TOOLS.map((n) => num(n)).join(', ')} tools`,
    `load average: ${loadAtStart} at the start, ${loadAverage()} at the end`,
    '',
    '### The checks alone (lintWorkflow; a process per size)',
    '',
    table(
      ['tools', 'findings', 'event-loop thread CPU', 'wall', 'CPU per tool', 'heap growth while checking', 'kept (the findings)', 'in slices (WorkflowChecks.check): longest block', 'in slices: until reported', '(registry build, for scale)'],
      checks.map((c) => [num(c.tools), num(c.findings), ms(c.cpuMs, 1), ms(c.wallMs, 1), perTool(c.cpuMs, c.tools), mib(c.heapGrowthBytes, 2), mib(c.keptBytes, 2), ms(c.longestBlockMs, 1), ms(c.slicedMs, 0), ms(c.buildMs, 0)]),
    ),
    '',
    '### `tg-agent lint --file` (the compiled command, /usr/bin/time)',
    '',
    table(
      ['tools', 'dump', 'exit status', 'wall', 'CPU', 'CPU per tool', 'peak resident memory', 'output lines'],
      lints.map((l) => [num(l.tools), mib(l.dumpBytes), String(l.exitCode), `${l.wallSeconds.toFixed(2)} s`, `${l.cpuSeconds.toFixed(2)} s`, perTool(l.cpuSeconds * 1000, l.tools), mib(l.maxRssKiB * 1024, 0), num(l.outputLines)]),
    ),
  ].join('\n'),
);
writeJson(flags.get('json'), { kind: 'workflow-checks', checks, lints });
