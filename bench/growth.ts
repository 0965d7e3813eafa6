/**
 * How the agent's cost grows with the size of what it holds: tools, workspaces, conversations in flight.
 *
 *   npm run bench:growth -- --dimension tools            10 … 100 000 tools in one workspace
 *   npm run bench:growth -- --dimension workspaces       1 … 1 000 workspaces of 100 tools
 *   npm run bench:growth -- --dimension conversations    64 … 10 000 in flight, native Pulsar
 *
 * Takes about 4 min (tools), 3 min (workspaces) or 8 min (conversations), plus up to 10 min waiting for the
 * 1-minute load average to drop under --max-load.
 *
 * Needs: for tools and workspaces, nothing but this checkout (no broker: the whole agent in a process of its
 * own per size, so each size's heap and RSS are its own; bench/support/growth-in-process.ts); for
 * conversations, a Pulsar broker as bench:iteration gets one (bench/support/growth-conversations.ts).
 *
 * Prints one table per dimension and, for each measure, how it grows over the last step (the two largest sizes): the exponent k of
 * size^k (1 = linear; per-unit figures should stay flat, k ≈ 0).
 *
 * Flags: --dimension tools|workspaces|conversations  --sizes 10,100,… (default per dimension)
 *        --reloads 3 (per case)  --max-load 1.5  --json <file>  --keep-logs
 *        --charts <folder> (one SVG per curve; npm run bench:chart redraws them from --json)
 *        conversations: --transport native|websocket  --duration 10 (s, measured)
 *        --warmup 5 (s; at least one turn-over of what is in flight)
 *        --cpu-prof (the agent writes a V8 CPU profile per size next to its log, drawn as flame-<transport>-c<n>.svg;
 *        add --keep-logs)  --trace-gc (the agent logs every garbage collection)
 *        --node-flags="<flags>" (with "=": more node/V8 flags for the agent)
 *        --size N --child (internal: one size, in the process bench:growth forks for it)
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildAgent } from './support/build.js';
import { startBenchBroker } from './support/broker.js';
import { growthChartSpecs, GROWTH_CURVES, runNote, shownFlags, writeSvg, type GrowthDimension, type GrowthRunJson } from './support/charts/index.js';
import { measureConversations } from './support/growth-conversations.js';
import { measureTools, measureWorkspaces, TOOLS_PER_WORKSPACE, type GrowthRow } from './support/growth-in-process.js';
import { agentNodeFlags, benchFlags, commonOptions } from './support/options.js';
import { loadAverage, loadAverage1, machineInfo, waitForLowLoad } from './support/proc.js';
import { log, withCleanup, writeJson } from './support/run.js';
import { num, numberFlag, table } from './support/stats.js';
import { createBenchTransport, type BenchTransportKind } from './support/transport.js';
import { ConversationClient, startWorkload } from './support/workload.js';

const DEFAULT_SIZES: Record<GrowthDimension, number[]> = {
  tools: [10, 100, 1_000, 10_000, 100_000],
  workspaces: [1, 10, 100, 1_000],
  conversations: [64, 256, 1_000, 4_000, 10_000],
};

const flags = benchFlags(import.meta.url);
const dimension = (flags.get('dimension') ?? '') as GrowthDimension;
if (!(dimension in DEFAULT_SIZES)) {
  process.stderr.write(`--dimension takes tools, workspaces or conversations, got ${JSON.stringify(flags.get('dimension') ?? '')} (--help prints the usage)\n`);
  process.exit(2);
}
const reloads = numberFlag(flags, 'reloads', 3);

/** Runs one size of an in-process dimension in a fresh process (with --expose-gc, as this one runs). */
function inChild(size: number): Promise<GrowthRow> {
  const execArgv = process.execArgv.includes('--expose-gc') ? process.execArgv : [...process.execArgv, '--expose-gc'];
  const child = fork(fileURLToPath(import.meta.url), ['--dimension', dimension, '--size', String(size), '--reloads', String(reloads), '--child'], { execArgv });
  return new Promise((resolve, reject) => {
    let row: GrowthRow | undefined;
    child.once('message', (message: GrowthRow) => (row = message));
    child.once('exit', (code) => (row ? resolve(row) : reject(new Error(`the ${dimension} run of size ${size} exited with code ${code} before reporting`))));
  });
}

async function main(): Promise<void> {
  const common = commonOptions(flags, { durationSeconds: 10, warmupSeconds: 5 });
  const sizes = flags.has('sizes') ? flags.get('sizes')!.split(',').map(Number) : DEFAULT_SIZES[dimension];
  const rows: GrowthRow[] = [];
  await withCleanup(async (defer) => {
    await waitForLowLoad(common.maxLoad, 10 * 60_000, log);
    if (dimension === 'conversations') {
      rows.push(...(await conversations(sizes, common, defer)));
      return;
    }
    for (const size of sizes) {
      const loadStart = loadAverage1();
      log(`${dimension}: ${num(size)} (load average ${loadAverage()})`);
      rows.push({ ...(await inChild(size)), loadStart, loadEnd: loadAverage1() });
    }
  });
  const note = runNote(`npm run bench:growth -- ${shownFlags()}`, machine());
  const run: GrowthRunJson = { kind: 'growth', dimension, note, rows };
  console.log(report(run));
  writeJson(common.jsonOut, run);
  const charts = flags.get('charts');
  if (charts) for (const [name, spec] of growthChartSpecs(run)) await writeSvg(join(charts, name), spec);
}

async function conversations(sizes: number[], common: ReturnType<typeof commonOptions>, defer: (fn: () => Promise<unknown> | unknown) => void): Promise<GrowthRow[]> {
  const kind = (flags.get('transport') ?? 'native') as BenchTransportKind;
  if (kind !== 'native' && kind !== 'websocket') throw new TypeError(`--transport takes native or websocket, got ${kind}`);
  const logDir = mkdtempSync(join(tmpdir(), 'tg-agent-growth-logs-'));
  if (common.keepLogs) log(`the agent's logs: ${logDir}`);
  else defer(() => rmSync(logDir, { recursive: true, force: true }));
  const build = await buildAgent(log);
  defer(() => build.remove());
  const broker = await startBenchBroker({ log });
  defer(() => broker.stop());
  const transport = await createBenchTransport(kind, broker);
  defer(() => transport.close());
  const workload = await startWorkload({ transport });
  defer(() => workload.stop());
  const gatewayTransport = await createBenchTransport(kind, broker);
  defer(() => gatewayTransport.close());
  // A timeout far above n / throughput at the largest n: a conversation waits its turn, it is not lost.
  const client = new ConversationClient(gatewayTransport, workload.topics, 300_000);
  await client.start();
  defer(() => client.stop());
  const rows: GrowthRow[] = [];
  for (const size of sizes) {
    log(`conversations: ${num(size)} in flight on ${kind} (load average ${loadAverage()})`);
    const setup = { build, address: broker, kind, workload, client, logDir, warmupSeconds: common.warmupSeconds, durationSeconds: common.durationSeconds, nodeFlags: agentNodeFlags(flags, logDir), cpuProfile: flags.has('cpu-prof'), log };
    rows.push(await measureConversations(setup, size));
  }
  return rows;
}

function machine(): string {
  const m = machineInfo();
  return `${m.cpus} CPUs, Node ${m.node}`;
}

/** The exponent k of size^k over the last step of `rows` (the largest sizes). */
export function growthExponent(rows: readonly GrowthRow[], field: string): number {
  const [a, b] = rows.slice(-2);
  if (!a || !b || !(a[field]! > 0) || !(b[field]! > 0)) return Number.NaN;
  return Math.log(b[field]! / a[field]!) / Math.log(b.size / a.size);
}

function verdict(k: number): string {
  if (!Number.isFinite(k)) return '–';
  if (k < 0.3) return 'flat';
  if (k < 0.85) return 'less than linear';
  if (k <= 1.15) return 'linear';
  return 'worse than linear';
}

const MEASURES: Record<GrowthDimension, [string, string, (v: number) => string][]> = {
  tools: [
    ['firstLoadMs', 'first load', (v) => `${num(v, 1)} ms`],
    ['firstLoadBlockMs', 'first load: longest event-loop block', (v) => `${num(v, 1)} ms`],
    ['allChangedMs', 'all changed: reload (median)', (v) => `${num(v, 1)} ms`],
    ['allChangedBlockMs', 'all changed: longest block', (v) => `${num(v, 1)} ms`],
    ['oneChangedMs', 'one changed: reload (median)', (v) => `${num(v, 1)} ms`],
    ['oneChangedBlockMs', 'one changed: longest block', (v) => `${num(v, 1)} ms`],
    ['heapBytes', 'heap used after GC', (v) => `${num(v / 1048576, 1)} MiB`],
    ['heapPerToolBytes', '… per tool', (v) => `${num(v / 1024, 2)} KiB`],
    ['rssBytes', 'RSS', (v) => `${num(v / 1048576, 1)} MiB`],
    ['rssPerToolBytes', '… per tool', (v) => `${num(v / 1024, 2)} KiB`],
    ['offered', 'tools offered (mean)', (v) => num(v, 0)],
    ['offerUncachedNs', 'offer time, uncached', (v) => `${num(v / 1000, 1)} µs`],
    ['offerCachedNs', 'offer time, cached', (v) => `${num(v / 1000, 2)} µs`],
  ],
  workspaces: [
    ['tools', 'tools in all', (v) => num(v, 0)],
    ['loadMs', 'config load (every workspace)', (v) => `${num(v, 0)} ms`],
    ['loadMsPerWorkspace', '… per workspace', (v) => `${num(v, 2)} ms`],
    ['loadBlockMs', 'config load: longest event-loop block', (v) => `${num(v, 1)} ms`],
    ['reloadOneMs', 'reload of one workspace (median)', (v) => `${num(v, 1)} ms`],
    ['reloadOneBlockMs', '… longest block', (v) => `${num(v, 1)} ms`],
    ['heapBytes', 'heap used after GC', (v) => `${num(v / 1048576, 1)} MiB`],
    ['heapPerWorkspaceBytes', '… per workspace', (v) => `${num(v / 1024, 1)} KiB`],
    ['rssBytes', 'RSS', (v) => `${num(v / 1048576, 1)} MiB`],
    ['rssPerWorkspaceBytes', '… per workspace', (v) => `${num(v / 1024, 1)} KiB`],
  ],
  conversations: [
    ['conversationsPerSecond', 'conversations/s', (v) => num(v, 1)],
    ['p50Ms', 'latency p50', (v) => `${num(v, 0)} ms`],
    ['p99Ms', 'latency p99', (v) => `${num(v, 0)} ms`],
    ['failed', 'failed', (v) => num(v, 0)],
    ['failedNoReply', '… no reply from the prompt or tool service in 30 s', (v) => num(v, 0)],
    ['failedOverloaded', '… refused by the agent (--max-queued)', (v) => num(v, 0)],
    ['failedGatewayTimeout', '… no final message within the gateway\'s 300 s', (v) => num(v, 0)],
    ['iterationsPerSecond', 'iterations/s (the agent\'s count)', (v) => num(v, 1)],
    ['cpuMsPerIteration', 'agent CPU per iteration', (v) => `${num(v, 3)} ms`],
    ['eventLoopMsPerIteration', '… of it on the event loop', (v) => `${num(v, 3)} ms`],
    ['heapBytes', 'heap used after GC, over idle', (v) => `${num(v / 1048576, 1)} MiB`],
    ['heapPerConversationBytes', '… per conversation', (v) => `${num(v / 1024, 2)} KiB`],
    ['rssBytes', 'RSS, over idle', (v) => `${num(v / 1048576, 1)} MiB`],
    ['rssPerConversationBytes', '… per conversation', (v) => `${num(v / 1024, 2)} KiB`],
  ],
};

function report(run: GrowthRunJson): string {
  const { rows } = run;
  const unit = GROWTH_CURVES[run.dimension].xTitle;
  const header = [unit, ...rows.map((r) => num(r.size)), 'k over the last step', 'grows'];
  const body = MEASURES[run.dimension].map(([field, label, format]) => {
    const k = growthExponent(rows, field);
    return [label, ...rows.map((r) => (r[field] === undefined || Number.isNaN(r[field]) ? '–' : format(r[field]))), Number.isFinite(k) ? k.toFixed(2) : '–', verdict(k)];
  });
  body.push(['load average (1 min) start → end', ...rows.map((r) => `${r.loadStart?.toFixed(1)} → ${r.loadEnd?.toFixed(1)}`), '', '']);
  return [`${run.note}${run.dimension === 'workspaces' ? `; ${TOOLS_PER_WORKSPACE} tools per workspace` : ''}\n`, table(header, body)].join('\n');
}

if (flags.has('child')) {
  // One size, in the process forked for it: the figures go back to the parent.
  const size = numberFlag(flags, 'size', 0);
  const row = dimension === 'tools' ? await measureTools(size, reloads) : await measureWorkspaces(size, reloads);
  process.send!(row, () => process.exit(0));
} else {
  await main();
  // Conversations lost on a loaded machine keep the gateway's timers for minutes: the figures are out.
  process.exit(0);
}
