/**
 * Reloading 10 000 tools under load: how long the agent's event loop is blocked, and what that
 * does to requests.
 *
 *   npm run bench:reload
 *
 * Takes about 10 min (plus up to 10 min waiting for the 1-minute load average to drop under
 * --max-load); --in-process-only about 3 min, no broker.
 *
 * Needs: a Pulsar broker: Java 17+ and Maven (tools/pulsar-standalone, from Maven Central jars), a
 * Docker engine, or PULSAR_URL.
 *
 * The agent runs as its own process (as in bench/iteration.ts) with a probe that records every event-loop
 * block longer than 10 ms (a 1 ms timer; see bench/support/agent-probe.ts) and the event-loop delay
 * histogram (`monitorEventLoopDelay`, 1 ms resolution). Its workspace holds 10 000 synthetic tools (the
 * bench/filter.ts shape) plus the one tool the conversations use. TrustGraph's config service runs in its
 * own process (bench/support/config-process.ts) so encoding a multi-MB answer stalls neither the agent nor
 * the load generator. Conversations (two iterations each) run at a constant concurrency throughout:
 *
 *   1. baseline: no reloads, `--phase` seconds;
 *   2. one phase per case of `--cases` (default all three): `--reloads` reloads (default 100), one every
 *      `--reload-every` seconds at most:
 *      - `first`: a workspace the agent has never seen, holding all 10 000 tools, is announced (the previous
 *        one deleted in the same push): the agent fetches them and builds a registry from nothing, as on its
 *        first load — while the conversations go on in the main workspace;
 *      - `one`: one tool value of the main workspace changes (the usual operator edit; the push still makes
 *        the agent fetch and decode all 10 000);
 *      - `all`: every tool value of the main workspace changes.
 *
 * The goal is read per reload: the longest block between its push and a little after the agent reported it
 * applied; per case, how many of them are over 50 ms, the worst and the p99, and what the worst was made of:
 * the event-loop thread's CPU, its wait for a core (runnable, not running: the machine's scheduling) and the
 * rest, when it slept. The baseline gets the same figures from windows of the same length, one per interval.
 *
 * `--busy` runs `yes > /dev/null` beside the benchmark for the whole run (a busy loop taking a core's worth of
 * CPU, as other jobs on a CI runner do).
 *
 * Before that, the same work the agent does on a reload is timed step by step in this process.
 *
 * The broker's WebSocket frame limit is raised to 16 MiB (bench/support/broker.ts): the config answer
 * holding 10 000 tools is ~3.4 MiB, ~4.6 MiB as a WebSocket frame, and the benchmark's config service
 * publishes it over WebSocket, where a stock broker accepts at most 1 MiB per incoming frame. (The agent
 * only receives it; the broker sends large frames to WebSocket consumers on a stock configuration.)
 *
 * `--transport native` runs the agent on the native Pulsar client instead of the WebSocket API (the config
 * service and the load generator stay on WebSocket): the config answer then reaches the agent as a binary
 * payload, with no WebSocket frame to decode.
 *
 * Flags: --transport websocket|native  --tools 10000  --cases first,one,all  --changed <tools changed per reload, overrides one/all>
 *        --concurrency 8  --phase 60 (s, the baseline)  --reloads 100 (per case)
 *        --reload-every 1.5 (s)  --busy  --max-load 1.5  --json <file>
 *        --trace-gc (the agent logs every garbage collection, node --trace-gc; add --keep-logs to keep it)
 *        --node-flags="<flags>" (with "=": more node/V8 flags for the agent, e.g. "--trace-gc-nvp" or "--max-semi-space-size=32")
 *        --cpu-prof (the agent writes a V8 CPU profile into the log directory; add --keep-logs to keep it)
 *        --keep-logs (keep the agent's log directory; it grows by ~120 KB per iteration with 10 000 tools)
 *        --agent-group-nice=-5 (the agent in a scheduling group of its own, a Linux autogroup at this nice, against the
 *          rest of the machine: what a pod's CPU request gives it; below 0 needs root)
 *        --agent-cpus 0 (the agent alone on these CPUs, everything else on the rest: a core of its own, as a pod
 *          with an integer CPU request gets under the kubelet's static CPU manager policy)
 *        --in-process-only (only the reload path in this process, no broker: bench/reload-in-process.ts)
 */
import { agentNodeFlags, benchFlags } from './support/options.js';
import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { queueToTopic } from '../src/bus/topics.js';
import { WebSocketTransport } from '../src/bus/pulsar/websocket/websocket-transport.js';
import type { Block, ProbeSample } from './support/agent-probe.js';
import type { ReloadKind } from './support/config-process.js';
import { AgentProcess, startConfigProcess } from './support/agent-process.js';
import { startBusyLoop } from './support/busy-loop.js';
import { anatomy, baselineWindows, GOAL_HEADER, goalRow } from './support/reload-windows.js';
import { buildAgent } from './support/build.js';
import { runInProcess } from './reload-in-process.js';
import { reloadSteps } from './support/reload-steps.js';
import { startBenchBroker } from './support/broker.js';
import { topicDeliveries } from './support/broker-traffic.js';
import { coreShare, CpuMeter, loadAverage, reserveCpusForAgent, waitForLowLoad, type CpuReading } from './support/proc.js';
import { header, log, withCleanup, writeJson } from './support/run.js';
import { mib, ms, num, numberFlag, quantile, sleep, summarize, table, type Summary } from './support/stats.js';
import { ConversationClient, startWorkload, type ConversationRecord } from './support/workload.js';

const flags = benchFlags(import.meta.url);

/** How much of a block the garbage collector held the event loop, and its longest pause: "31.2 ms (major 28.0)". */
function gcOf(block: Block): string {
  if (block.gcMs <= 0) return '0';
  return `${ms(block.gcMs, 1)}${block.longestGc ? ` (${block.longestGc.kind} ${num(block.longestGc.ms, 1)})` : ''}`;
}
const TOOLS = numberFlag(flags, 'tools', 10_000);
const CONCURRENCY = numberFlag(flags, 'concurrency', 8);
const PHASE_S = numberFlag(flags, 'phase', 60);
const RELOAD_EVERY_S = numberFlag(flags, 'reload-every', 1.5);
/** Tools each `one`/`all` reload changes, when given; the push still makes the agent fetch all of them. */
const CHANGED = flags.has('changed') ? numberFlag(flags, 'changed', TOOLS) : undefined;
const CASE_NAMES: Record<ReloadKind, string> = {
  first: 'first load (a new workspace of all the tools)',
  one: 'one tool changed',
  all: 'all tools changed',
};
const CASES = (flags.get('cases') ?? 'first,one,all').split(',').map((name) => {
  if (!(name in CASE_NAMES)) throw new Error(`--cases: unknown case "${name}" (first, one, all)`);
  return name as ReloadKind;
});
const MAX_LOAD = numberFlag(flags, 'max-load', 1.5);
const TRANSPORT = flags.get('transport') ?? 'websocket';
if (TRANSPORT !== 'websocket' && TRANSPORT !== 'native') throw new Error(`--transport: unknown transport "${TRANSPORT}" (websocket, native)`);
const JSON_OUT = flags.get('json');
/** The agent's log grows by ~120 KB per iteration with 10 000 tools (the audit line); removed unless asked. */
const KEEP_LOGS = flags.has('keep-logs');
/** Only the reload path in this process (bench/reload-in-process.ts): no broker, no agent process. */
const IN_PROCESS_ONLY = flags.has('in-process-only');
const RELOADS = numberFlag(flags, 'reloads', 100);
/** A busy loop (`yes > /dev/null`) beside the benchmark for the whole run, as other jobs on a CI runner. */
const BUSY = flags.has('busy');
const AGENT_CPUS = flags.get('agent-cpus');
const AGENT_GROUP_NICE = (() => {
  const raw = flags.get('agent-group-nice');
  if (raw === undefined) return undefined;
  const nice = Number(raw);
  if (!Number.isInteger(nice) || nice < -20 || nice > 19) throw new Error(`--agent-group-nice: a nice value from -20 to 19, got ${JSON.stringify(raw)}`);
  return nice;
})();
const FRAME_LIMIT = 16 * 1024 * 1024;
const BLOCK_THRESHOLD_MS = 10;
const GOAL_MS = 50;

interface Reload {
  kind: ReloadKind;
  index: number;
  /** Date.now() when the reload was asked for, when its push was published, when the agent reported it applied. */
  askedAt: number;
  pushedAt: number;
  appliedAt: number;
  version: number;
  encodeMs: number;
}

interface PhaseResult {
  name: string;
  /** Date.now() at its start and end. */
  from: number;
  to: number;
  seconds: number;
  conversations: number;
  failed: number;
  /** Bytes the agent logged during the phase. */
  logBytes: number;
  latency: Summary;
  eld: ProbeSample['eld'];
  blocks: Block[];
  cpu: CpuReading;
}

/** Registry rebuild times by config version, from the agent's log (streamed: with 10 000 tools it is large). */
async function rebuildTimes(logFile: string): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for await (const line of createInterface({ input: createReadStream(logFile, 'utf8'), crlfDelay: Infinity })) {
    if (!line.includes('Tool registry rebuilt')) continue;
    try {
      const record = JSON.parse(line) as { version?: number; ms?: number; tools?: number };
      if (typeof record.version === 'number' && typeof record.ms === 'number' && (record.tools ?? 0) > 1) out.set(record.version, record.ms);
    } catch {
      // not a JSON line
    }
  }
  return out;
}

if (IN_PROCESS_ONLY) {
  const loadAtStart = loadAverage();
  const busy = BUSY ? startBusyLoop() : undefined;
  const { text, readings } = await runInProcess({ transport: TRANSPORT, tools: TOOLS, reloads: RELOADS, cases: CASES });
  busy?.stop();
  console.log(
    [
      `## tg-agent reload path in-process: ${num(TOOLS)} tools, as the ${TRANSPORT} transport hands the answer over, ${RELOADS} reloads per case`,
      `load average: ${loadAtStart} before, ${loadAverage()} after${busy ? '; `yes > /dev/null` running beside it (--busy)' : ''}; blocks: gaps between ticks of a 1 ms timer on the event loop`,
      '',
      text,
    ].join('\n'),
  );
  writeJson(JSON_OUT, { kind: 'reload-in-process', transport: TRANSPORT, cases: CASES, readings });
  process.exit(0);
}

await withCleanup(async (defer) => {
  const loadAtStart = await waitForLowLoad(MAX_LOAD, 10 * 60_000, log);
  const cpuSplit = AGENT_CPUS === undefined ? undefined : reserveCpusForAgent(AGENT_CPUS);
  if (cpuSplit) log(`the agent runs alone on CPU ${cpuSplit.agent}; this process, the broker and the config service on ${cpuSplit.others}`);
  log(`measuring the reload work in-process (${TOOLS} tools)`);
  const steps = await reloadSteps(TOOLS);

  const build = await buildAgent(log);
  defer(() => build.remove());
  const broker = await startBenchBroker({ maxTextFrameBytes: FRAME_LIMIT, log });
  defer(() => broker.stop());
  log(`broker: ${broker.webSocketUrl} (pid ${broker.pid ?? 'unknown'}, Pulsar ${broker.version})`);
  const transport = new WebSocketTransport({ url: broker.webSocketUrl });
  defer(() => transport.close());
  const workload = await startWorkload({ transport, externalConfig: true });
  defer(() => workload.stop());
  const logDir = mkdtempSync(join(tmpdir(), 'tg-agent-bench-logs-'));
  log(`logs in ${logDir}${KEEP_LOGS ? '' : ' (removed at the end; --keep-logs keeps them)'}`);
  if (!KEEP_LOGS) defer(() => rmSync(logDir, { recursive: true, force: true }));

  const config = await startConfigProcess(
    build,
    {
      webSocketUrl: broker.webSocketUrl,
      maxFrameBytes: FRAME_LIMIT,
      queues: workload.configQueues,
      workspace: workload.workspace,
      entries: workload.entries,
      toolCount: TOOLS,
      ...(CHANGED === undefined ? {} : { changedPerReload: CHANGED }),
    },
    join(logDir, 'config.log'),
  );
  defer(() => config.stop());
  log(`config service: ${TOOLS + 1} tools, getvalues answer ${mib(config.payloadBytes)}`);

  const agentLog = join(logDir, 'agent.log');
  const startedAt = performance.now();
  const agent = await AgentProcess.start({
    build,
    webSocketUrl: broker.webSocketUrl,
    concurrency: CONCURRENCY,
    configQueues: workload.configQueues,
    logFile: agentLog,
    transport: TRANSPORT,
    serviceUrl: broker.serviceUrl,
    ...(cpuSplit ? { cpus: cpuSplit.agent } : {}),
    ...(AGENT_GROUP_NICE === undefined ? {} : { groupNice: AGENT_GROUP_NICE }),
    env: { TG_BENCH_ELD_RESOLUTION_MS: '1', TG_BENCH_BLOCK_THRESHOLD_MS: String(BLOCK_THRESHOLD_MS) },
    nodeFlags: agentNodeFlags(flags, logDir),
  });
  defer(() => agent.stop());
  await agent.waitReady(120_000);
  log(`agent ready with ${TOOLS + 1} tools after ${((performance.now() - startedAt) / 1000).toFixed(1)} s`);

  const client = new ConversationClient(transport, workload.topics);
  await client.start();
  defer(() => client.stop());
  const wall = (t: number): number => performance.timeOrigin + t;
  const records: ConversationRecord[] = [];
  let stop = false;
  let phaseName = 'warm-up';
  const running = client.run(
    CONCURRENCY,
    () => stop,
    (r) => {
      records.push(r);
      // A phase counts the conversations that started and ended in it: one that timed out spans two.
      if (r.responses === -1) log(`a conversation started ${((r.end - r.start) / 1000).toFixed(0)} s ago timed out without its end_of_dialog (now in: ${phaseName})`);
    },
  );
  defer(async () => {
    stop = true;
    await running;
  });
  await sleep(3000);

  const pids = { agent: agent.pid, broker: broker.pid, generator: process.pid, config: config.pid };
  const runPhase = async (name: string, during?: () => Promise<void>): Promise<PhaseResult> => {
    log(`phase: ${name}${during ? '' : ` (${PHASE_S} s)`}`);
    phaseName = name;
    await agent.sample({ reset: true });
    const meter = new CpuMeter(pids);
    const logBefore = statSync(agentLog).size;
    const from = Date.now();
    await (during ? during() : sleep(PHASE_S * 1000));
    const to = Date.now();
    const cpu = meter.stop();
    const logBytes = statSync(agentLog).size - logBefore;
    const probe = await agent.sample({ reset: true });
    const done = records.filter((r) => wall(r.start) >= from && wall(r.end) <= to);
    return {
      name,
      from,
      to,
      seconds: (to - from) / 1000,
      logBytes,
      conversations: done.length,
      failed: done.filter((r) => r.failed).length,
      latency: summarize(done.filter((r) => !r.failed).map((r) => r.end - r.start)),
      eld: probe.eld,
      blocks: probe.blocks,
      cpu,
    };
  };

  if (BUSY) {
    const busy = startBusyLoop();
    defer(() => busy.stop());
    log(`busy loop: yes > /dev/null (pid ${busy.pid}) until the end of the run`);
    await sleep(2000);
  }
  const baseline = await runPhase('baseline (no reloads)');
  const reloads: Reload[] = [];
  const phases: { kind: ReloadKind; result: PhaseResult }[] = [];
  for (const kind of CASES) {
    const result = await runPhase(`${CASE_NAMES[kind]}: ${RELOADS} reloads of ${TOOLS} tools, one every ${RELOAD_EVERY_S} s at most`, async () => {
      for (let done = 0; done < RELOADS; done++) {
        const askedAt = Date.now();
        const reloaded = await config.reload(kind);
        const pushedAt = Date.now();
        const deadline = pushedAt + 30_000;
        while ((await agent.configVersion()) < reloaded.version && Date.now() < deadline) await sleep(20);
        const appliedAt = Date.now();
        reloads.push({ kind, index: reloads.length + 1, askedAt, pushedAt, appliedAt, version: reloaded.version, encodeMs: reloaded.encodeMs });
        const next = askedAt + RELOAD_EVERY_S * 1000;
        if (next > Date.now()) await sleep(next - Date.now());
      }
    });
    phases.push({ kind, result });
  }
  stop = true;
  await running;
  // What a Prometheus scrape costs with this many tools (per-tool series).
  await agent.sample({ reset: true });
  const scrapes: { ms: number; bytes: number }[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    const { text } = await agent.get('/metrics');
    scrapes.push({ ms: performance.now() - started, bytes: Buffer.byteLength(text) });
    await sleep(300);
  }
  const scrapeProbe = await agent.sample({ reset: true });
  const scrapeSeries = (await agent.get('/metrics')).text.split('\n').filter((line) => line !== '' && !line.startsWith('#')).length;
  const rebuilt = await rebuildTimes(agentLog);
  const rebuildMetric = await agent.metrics(['tg_agent_registry_rebuild_seconds_sum', 'tg_agent_registry_rebuild_seconds_count']);
  // The flow's non-persistent topics: what reached each, and what the broker handed to each subscription.
  const flowTopics = [...new Set(Object.values(workload.topics).map((queue) => queueToTopic(queue)))].filter((t) => t.startsWith('non-persistent://'));
  const deliveries = (await Promise.all(flowTopics.map((t) => topicDeliveries(broker.webServiceUrl, t)))).filter((d) => d !== undefined);

  // Per reload: the blocks between the push and a little after the agent reported it applied.
  const allBlocks = phases.flatMap((p) => p.result.blocks);
  const windowOf = (r: Reload): { from: number; to: number } => ({ from: r.pushedAt - 20, to: r.appliedAt + 100 });
  const perReload = reloads.map((r) => {
    const blocks = allBlocks.filter((b) => b.at >= windowOf(r).from && b.at <= windowOf(r).to);
    const overlapping = records.filter((c) => !c.failed && wall(c.start) < r.appliedAt && wall(c.end) > r.pushedAt);
    const longestBlock = blocks.reduce<Block | undefined>((most, b) => (most === undefined || b.ms > most.ms ? b : most), undefined);
    return {
      ...r,
      rebuildMs: rebuilt.get(r.version),
      longestBlock: longestBlock?.ms ?? 0,
      longestBlockGc: longestBlock ? gcOf(longestBlock) : '–',
      longestBlockAnatomy: anatomy(longestBlock),
      mostCpu: Math.max(0, ...blocks.map((b) => b.cpuMs)),
      mostMainCpu: Math.max(0, ...blocks.map((b) => b.mainCpuMs ?? Number.NaN)),
      blocked: blocks.reduce((sum, b) => sum + b.ms, 0),
      blocks: blocks.length,
      overlapping: overlapping.length,
      overlappingMax: Math.max(0, ...overlapping.map((c) => c.end - c.start)),
    };
  });
  const overlappingLatencies = records
    .filter((c) => !c.failed && reloads.some((r) => wall(c.start) < r.appliedAt && wall(c.end) > r.pushedAt))
    .map((c) => c.end - c.start);

  const phaseRow = (p: PhaseResult, latency: Summary = p.latency): string[] => [
    p.name,
    num(p.conversations / p.seconds, 1),
    ms(latency.p50, 1),
    ms(latency.p99, 1),
    ms(latency.max, 1),
    ms(p.eld.p99 - p.eld.resolutionMs, 1),
    ms(p.eld.max - p.eld.resolutionMs, 1),
    ms(Math.max(0, ...p.blocks.map((b) => b.ms)), 1),
    (() => {
      const longest = p.blocks.reduce<Block | undefined>((most, b) => (most === undefined || b.ms > most.ms ? b : most), undefined);
      return longest ? gcOf(longest) : '–';
    })(),
    ms(Math.max(0, ...p.blocks.map((b) => b.mainCpuMs ?? Number.NaN)), 1),
    String(p.blocks.filter((b) => b.ms > GOAL_MS).length),
    `${coreShare(p.cpu.processes.agent ?? Number.NaN, p.cpu.wall)} / ${coreShare(p.cpu.processes.broker ?? Number.NaN, p.cpu.wall)} / ${coreShare(p.cpu.processes.config ?? Number.NaN, p.cpu.wall)}`,
    ms(((p.cpu.processes.agent ?? Number.NaN) * 1000) / (2 * p.conversations), 2),
    `${num(p.logBytes / 1024 / (2 * p.conversations), 1)} KiB`,
  ];
  const overGoal = perReload.filter((r) => r.longestBlock > GOAL_MS);
  const shownReloads = overGoal.length > 0 ? overGoal : [...perReload].sort((a, b) => b.longestBlock - a.longestBlock).slice(0, 5);
  const mostCpuOf = (kind: ReloadKind): number => Math.max(0, ...perReload.filter((r) => r.kind === kind).map((r) => r.mostCpu));
  const longest = Math.max(0, ...perReload.map((r) => r.longestBlock));
  const mostCpu = Math.max(0, ...perReload.map((r) => r.mostCpu));
  const mostMainCpu = Math.max(0, ...perReload.map((r) => r.mostMainCpu));
  const out = [
    header(`tg-agent reload benchmark: ${num(TOOLS)} tools, agent on the ${TRANSPORT} transport`, broker, [
      `load average before the run: ${loadAtStart}; at the end: ${loadAverage()}`,
      `conversations that timed out (30 s without their end_of_dialog; no phase counts them, as each spans two): ${client.timeouts}`,
      AGENT_GROUP_NICE === undefined
        ? 'scheduling: the agent in the benchmark\'s scheduling group (one Linux autogroup with the broker, the config service and the load generator)'
        : `scheduling: the agent in a scheduling group of its own (Linux autogroup) at nice ${AGENT_GROUP_NICE} (--agent-group-nice)`,
      BUSY ? 'other load: `yes > /dev/null` running beside the benchmark throughout (--busy)' : 'other load: none started by the benchmark',
      cpuSplit
        ? `CPUs: the agent alone on ${cpuSplit.agent}; the broker, the config service and the load generator on ${cpuSplit.others} (--agent-cpus)`
        : 'CPUs: shared by the agent, the broker, the config service and the load generator',
      `conversations at concurrency ${CONCURRENCY} (agent --concurrency ${CONCURRENCY}) throughout; a baseline of ${PHASE_S} s, then ${RELOADS} reloads per case, one every ${RELOAD_EVERY_S} s at most; cases: ${CASES.join(', ')}${CHANGED === undefined ? '' : ` (${num(CHANGED)} tools changed per one/all reload)`}`,
      `config answer with ${num(TOOLS + 1)} tools: ${mib(steps.payloadBytes)} payload, ${mib(steps.frameBytes)} WebSocket frame (broker webSocketMaxTextFrameSize raised to ${mib(FRAME_LIMIT, 0)} for the config service's WebSocket producer)`,
      `blocks: gaps > ${BLOCK_THRESHOLD_MS} ms between ticks of a 1 ms timer inside the agent (with the CPU the agent process, and its event-loop thread alone, used meanwhile); event-loop delay: monitorEventLoopDelay at 1 ms resolution (resolution subtracted)`,
    ]),
    '### The reload work, step by step (this process, same code and payload, median of 5)\n',
    table(['step', 'event-loop thread CPU', 'wall'], steps.rows),
    '\n### Requests and the event loop, without and with reloads\n',
    table(
      ['phase', 'conversations/s', 'latency p50', 'p99', 'max', 'event-loop delay p99', 'event-loop delay max', 'longest block', 'garbage collection in it', 'most event-loop thread CPU in one block', `blocks > ${GOAL_MS} ms`, 'CPU agent / broker / config service', 'agent CPU/iteration', 'agent log/iteration'],
      [
        phaseRow(baseline),
        ...phases.map((p) => phaseRow(p.result)),
        (() => {
          const l = summarize(overlappingLatencies);
          return ['… of which: conversations in flight during a reload (push → applied)', `(${l.count})`, ms(l.p50, 1), ms(l.p99, 1), ms(l.max, 1), '', '', '', '', '', '', '', '', ''];
        })(),
      ],
    ),
    `\n### The reloads with a block over ${GOAL_MS} ms (or the 5 longest)\n`,
    table(
      ['reload', 'case', 'config version', 'push → applied', 'registry rebuild (agent log)', 'longest block', 'garbage collection in it', 'its event-loop thread CPU + wait for a core + slept', 'most agent CPU in one block', 'most event-loop thread CPU in one block', 'blocked in total', 'blocks', 'conversations overlapping', 'their max latency'],
      shownReloads.map((r) => [
        String(r.index),
        r.kind,
        String(r.version),
        ms(r.appliedAt - r.pushedAt, 0),
        r.rebuildMs === undefined ? '–' : `${r.rebuildMs} ms`,
        ms(r.longestBlock, 1),
        r.longestBlockGc,
        r.longestBlockAnatomy,
        ms(r.mostCpu, 1),
        ms(r.mostMainCpu, 1),
        ms(r.blocked, 1),
        String(r.blocks),
        String(r.overlapping),
        ms(r.overlappingMax, 1),
      ]),
    ),
    `\nRegistry rebuilds (agent metric tg_agent_registry_rebuild_seconds, initial load included): ${rebuildMetric.tg_agent_registry_rebuild_seconds_count} rebuilds, mean ${ms((rebuildMetric.tg_agent_registry_rebuild_seconds_sum! / rebuildMetric.tg_agent_registry_rebuild_seconds_count!) * 1000, 1)}.`,
    `\nA /metrics scrape with ${num(TOOLS)} tools: ${num(scrapeSeries)} series, ${mib(scrapes[0]!.bytes)}, answered in ${ms(quantile(scrapes.map((x) => x.ms), 0.5), 1)} (median of 3); longest event-loop block during the scrapes ${ms(Math.max(0, ...scrapeProbe.blocks.map((b) => b.ms)), 1)}.`,
    '\n### What the broker delivered on the flow\'s non-persistent topics (the whole run)\n',
    table(
      ['topic', 'messages in', 'out, per subscription (a shortfall: dropped by the broker)'],
      deliveries.map((d) => [d.topic.replace(/^non-persistent:\/\/tg\//, ''), num(d.in), Object.entries(d.out).map(([sub, out]) => `${sub}: ${num(out)}${out < d.in ? ` (**${num(d.in - out)} short**)` : ''}`).join(', ')]),
    ),
    `\n### The goal, by case: the longest block of each reload (from its push to 100 ms after it applied), over ${GOAL_MS} ms; the baseline in windows of the same length\n`,
    table(GOAL_HEADER, [
      goalRow('baseline (no reloads)', baseline.blocks, baselineWindows(baseline.from, baseline.to, RELOAD_EVERY_S * 1000, quantile(reloads.map((r) => windowOf(r).to - windowOf(r).from), 0.5)), GOAL_MS),
      ...phases.map(({ kind, result }) => goalRow(CASE_NAMES[kind], result.blocks, reloads.filter((r) => r.kind === kind).map(windowOf), GOAL_MS)),
    ]),
    '',
    table(
      ['case', 'reloads', 'most agent CPU in one block', 'event-loop delay max (phase)', 'event-loop delay p99 (phase)', `blocks > ${GOAL_MS} ms (phase)`, 'push → applied (median)'],
      phases.map(({ kind, result }) => {
        const mine = perReload.filter((r) => r.kind === kind);
        return [
          CASE_NAMES[kind],
          String(mine.length),
          ms(mostCpuOf(kind), 1),
          ms(result.eld.max - result.eld.resolutionMs, 1),
          ms(result.eld.p99 - result.eld.resolutionMs, 1),
          String(result.blocks.filter((b) => b.ms > GOAL_MS).length),
          ms(quantile(mine.map((r) => r.appliedAt - r.pushedAt), 0.5), 0),
        ];
      }),
    ),
    `\nGoal "a reload of ${num(TOOLS)} tools never blocks requests for more than ${GOAL_MS} ms": **${longest <= GOAL_MS ? 'met' : 'missed'}** (longest block during a reload ${ms(longest, 1)}; the most CPU the agent used in one block ${ms(mostCpu, 1)}, its event-loop thread ${ms(mostMainCpu, 1)} — on a machine with other work a block is also time spent waiting for a core; the event-loop thread's CPU is what it would be on an idle one, the agent's CPU (every thread: worker threads and the garbage collector's helpers too) an upper bound of it).`,
  ].join('\n');
  console.log(out);
  writeJson(JSON_OUT, { kind: 'reload', transport: TRANSPORT, cpus: cpuSplit ?? 'shared', timeouts: client.timeouts, deliveries, cases: CASES, steps, baseline, phases, perReload, rebuildMetric, scrapes, scrapeSeries });
});
