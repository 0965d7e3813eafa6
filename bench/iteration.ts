/**
 * Speed of one ReAct iteration on the real broker.
 *
 *   npm run bench:iteration                         concurrency 1, 8, 64; ~30 s each
 *   npm run bench:iteration -- --soak 600           10-minute memory soak (concurrency 8)
 *
 * Takes about 6 min with TrustGraph's agent (about 18 min over four backends; plus up to 10 min
 * waiting for the 1-minute load average to drop under --max-load).
 *
 * Needs: a Pulsar broker: Java 17+ and Maven (tools/pulsar-standalone, from Maven Central jars), a
 * Docker engine, or PULSAR_URL; for TrustGraph's agent, Python 3 (scripts/trustgraph-venv.sh builds
 * its venv once, --trustgraph off skips it).
 *
 * The agent is the real one, compiled from src/ and run as its own process (`node …/src/main.js`, the
 * production entry point: flags, WebSocket transport, metrics server, info-level audit log), so its RSS,
 * CPU time and event loop are its own. Around it, in this process: TrustGraph's config service (the tests'
 * stand-in), zero-latency prompt and MCP tool stand-ins and the "gateway" (bench/support/workload.ts). Each
 * conversation is two iterations (the model calls one tool, then answers).
 *
 * For each concurrency c the agent runs with `--concurrency c` and the gateway keeps c conversations in
 * flight: a warm-up, then a measured window. Then the floor: the same WebSocket transport and the agent's
 * own RequestClient against an echo process (no agent), c requests in flight.
 *
 * Overhead per iteration = (conversation latency − 9 hops × floor RTT p50 / 2) / 2: a conversation's
 * critical path crosses the broker 9 times (bench/support/workload.ts), the floor round trip crosses it
 * twice. Reported at p50 and p99 of the per-conversation values. Cross-checks: the agent's own time per
 * iteration from its metrics (message handling time minus time waiting for the prompt and the tool), and
 * its CPU time per iteration (/proc/<pid>/stat).
 *
 * First, without any broker: the same app in this process on the in-process MemoryTransport
 * (bench/support/in-process.ts) — the agent's own time and CPU per iteration with the transport taken away.
 *
 * Every transport that loads here runs in turn, side by side (`--transports websocket,native`): the agent
 * (`--transport <kind>`), the stand-ins, the gateway and the echo all on that transport. `--transports
 * kafka,rabbitmq` adds TrustGraph's other backends, each on a node of the run's own
 * (bench/support/backend-nodes.ts): the agent with `--pubsub-backend`, everything else on that backend too.
 * Their brokers' CPU is measured as Pulsar's is; their per-topic traffic is not (Pulsar's admin API gives it).
 *
 * Then TrustGraph's own agent, `agent-manager-react` 2.11.1 from the venv of TrustGraph's pieces
 * (bench/support/trustgraph-agent.ts), runs the same workload on each backend at each concurrency
 * (`--concurrency c` for it too): on Pulsar with the stand-ins and the gateway on the native transport when
 * it loads (TrustGraph's processors speak the binary protocol), on Kafka and RabbitMQ on that backend. The
 * first tables compare: conversations/s and the ratio tg-agent / TrustGraph per transport, and agent CPU,
 * broker CPU per iteration and their ratio.
 *
 * `--agent-args` applies to the in-process runs too (`--in-process-only --agent-args="--hedge-budget 0"`: the agent's
 * own CPU per iteration without hedging).
 *
 * `--stand-ins python` runs the prompt, MCP tool and librarian services on TrustGraph's own Python client instead of the
 * lean JavaScript stand-ins (dev/python-stand-ins.ts: trustgraph-base's async Pulsar, Kafka or RabbitMQ backend,
 * one process per service, as TrustGraph runs them; on both Pulsar transports they speak the binary protocol).
 * Every run reports the conversations that ended without a final message within 30 s and the agent's hedged
 * calls (`tg_agent_hedged_requests_total`): from the window's start until every conversation started in it ended.
 *
 * Flags: --transports websocket,native,kafka,rabbitmq  --stand-ins js|python  --agent-args="<tg-agent flags>"  --concurrency 1,8,64  --duration 20 (s, measured)  --warmup 3  --floor 6  --idle 4  --in-process 8 (s; 0 = skip)  --max-load 1.5
 *        --soak <s>  --soak-concurrency 8  --sample-every 5  --warm-up-soak 60  --json <file>
 *        --chart <file.svg> (conversations/s against concurrency, TrustGraph's agent beside; redrawn from --json with npm run bench:chart)
 *        --trustgraph off (skip TrustGraph's agent)  --trustgraph-duration 20 (s, measured)  --trustgraph-warmup 5
 *        --cpu-prof (the agent writes a V8 CPU profile per concurrency next to its log, drawn as flame-<transport>-c<n>.svg; add --keep-logs)
 *        --keep-logs (keep the log directory, removed at the end otherwise)
 *        --in-process-only (only the in-process runs: no broker, no TrustGraph)
 *        --timeline N (after the window at concurrency 1: N conversations one at a time, each hop stamped)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Transport } from '../src/bus/transport.js';
import { AgentProcess, startEcho } from './support/agent-process.js';
import { isBackendKind, startBackendNodes } from './support/backend-nodes.js';
import { buildAgent } from './support/build.js';
import { measureInProcess, type InProcessResult } from './support/in-process.js';
import { writeFlameGraphOf } from './support/flame-graph.js';
import { startBenchBroker } from './support/broker.js';
import { HopTimeline } from './support/timeline.js';
import { readBrokerTraffic, trafficBetween, type BrokerTraffic, type TopicTraffic } from './support/broker-traffic.js';
import { coreShare, CpuMeter, loadAverage, processMemory, threadCpuBetween, threadCpuSeconds, waitForLowLoad, type CpuReading } from './support/proc.js';
import { header, log, withCleanup, writeJson } from './support/run.js';
import { measureWindow } from './support/window.js';
import { agentNodeFlags, benchFlags, commonOptions } from './support/options.js';
import { mib, ms, num, numberFlag, slope, sleep, summarize, table, type Summary } from './support/stats.js';
import {
  ConversationClient,
  CRITICAL_PATH_HOPS,
  FloorClient,
  ITERATIONS_PER_CONVERSATION,
  publishAckLatencies,
  REQUEST_BODY,
  startWorkload,
  type ServiceCounts,
  type Workload,
} from './support/workload.js';
import type { AgentBuild } from './support/build.js';
import { availableTransports, createBenchTransport, type BenchBrokerAddress, type BenchTransportKind } from './support/transport.js';
import { serveTrustGraphConfig, startTrustGraphAgent, TRUSTGRAPH_AGENT_COMMAND } from './support/trustgraph-agent.js';
import { duplicates, hedgesBetween, readHedges, type HedgeCounts } from './support/hedges.js';
import { whereLost, type LostAt } from './support/lost-conversations.js';
import { pythonBrokerUrl } from '../dev/python-stand-ins.js';
import { iterationChartSpec, runNote, shownFlags, writeSvg } from './support/charts/index.js';

const flags = benchFlags(import.meta.url);
const CONCURRENCIES = (flags.get('concurrency') ?? '1,8,64').split(',').map(Number);
const COMMON = commonOptions(flags, { durationSeconds: 20, warmupSeconds: 3 });
const DURATION_S = COMMON.durationSeconds;
const WARMUP_S = COMMON.warmupSeconds;
const FLOOR_S = numberFlag(flags, 'floor', 6);
const IDLE_S = numberFlag(flags, 'idle', 4);
const IN_PROCESS_S = numberFlag(flags, 'in-process', 8);
/** `--in-process-only`: the in-process runs and nothing else (no broker): the agent's own CPU, quickly. */
const IN_PROCESS_ONLY = flags.has('in-process-only');
const MAX_LOAD = COMMON.maxLoad;
const SOAK_S = numberFlag(flags, 'soak', 0);
const SOAK_CONCURRENCY = numberFlag(flags, 'soak-concurrency', 8);
const SAMPLE_EVERY_S = numberFlag(flags, 'sample-every', 5);
const SOAK_WARMUP_S = numberFlag(flags, 'warm-up-soak', 60);
const JSON_OUT = COMMON.jsonOut;
/** `--transports websocket,native`; default: every transport that loads here (the soak takes the first). */
const TRANSPORTS_FLAG = COMMON.transports;
/** `--cpu-prof`: the agent writes a V8 CPU profile per concurrency into the log directory. */
const CPU_PROFILE = flags.has('cpu-prof');
/** Keep the agents' logs (and CPU profiles) instead of removing them at the end. */
const KEEP_LOGS = COMMON.keepLogs;
/** `--trustgraph off` skips TrustGraph's agent. */
const TRUSTGRAPH = flags.get('trustgraph') !== 'off';
const TRUSTGRAPH_DURATION_S = numberFlag(flags, 'trustgraph-duration', DURATION_S);
const TRUSTGRAPH_WARMUP_S = numberFlag(flags, 'trustgraph-warmup', 5);
/** `--timeline N`: after the window at concurrency 1, N conversations one at a time, every hop stamped. */
const TIMELINE = numberFlag(flags, 'timeline', 0);
/** `--stand-ins python`: the services on TrustGraph's own Python client. */
const STAND_INS = flags.get('stand-ins') ?? 'js';
if (STAND_INS !== 'js' && STAND_INS !== 'python') throw new Error(`--stand-ins takes js or python, got ${STAND_INS}`);
/** `--agent-args="--hedge-budget 0"`: more flags for tg-agent (space-separated), e.g. to compare a setting. */
const AGENT_ARGS = (flags.get('agent-args') ?? '').split(' ').filter(Boolean);
if (STAND_INS === 'python' && TIMELINE > 0) throw new Error('--timeline needs the JavaScript stand-ins, which report their hops');

/** What every measured window reports, for tg-agent and TrustGraph's agent alike. */
interface WindowFigures {
  concurrency: number;
  loadAverage: { start: string; end: string };
  windowSeconds: number;
  conversations: number;
  failed: number;
  conversationsPerSecond: number;
  latency: Summary;
}

interface ConcurrencyResult extends WindowFigures {
  floor: Summary;
  floorCount: number;
  overhead: Summary;
  ratio: number;
  /** Mean per iteration from the agent's metrics: handling time minus prompt and tool waits, ms. */
  agentOwnTimeMs: number;
  agentCpuMsPerIteration: number;
  /** The broker JVM's CPU time (all threads, /proc) over the window, per iteration. */
  brokerCpuMsPerIteration: number;
  /** The agent's CPU per iteration by thread name (`main` is the event loop), ms, largest first. */
  agentThreadCpuMsPerIteration: Record<string, number>;
  /** The agent's CPU use with no traffic (timers, pings), as a fraction of one core. */
  agentIdleCpu: number;
  /** CPU per iteration after subtracting the idle CPU of the window. */
  agentCpuMsPerIterationNetOfIdle: number;
  publishesPerIteration: number;
  /** Messages and bytes published to the broker in the window (its own counters, every client), per iteration. */
  brokerMessagesPerIteration: number;
  brokerBytesPerIteration: number;
  /** The same by topic (short name), per iteration, largest first. */
  brokerTopics: [string, TopicTraffic][];
  cpu: CpuReading;
  floorCpu: CpuReading;
  peakRssBytes: number;
  eventLoop: { p99: number; max: number };
  /** The hop-by-hop timeline (`--timeline`), at concurrency 1. */
  timeline?: string;
  /** From the window's start until every conversation started in it ended (see the header). */
  span: SpanFigures;
}

/** Conversations started, those with no final message within 30 s, the hedges, the prompt requests the service got. */
interface SpanFigures {
  started: number;
  unanswered: number;
  /** Where each of those stopped (the agent's audit lines), and the first few ids. */
  lost: Partial<Record<LostAt, number>>;
  lostIds: string[];
  hedges: HedgeCounts;
  promptRequests: number;
}

/** What the span's figures are read from. */
interface SpanMark {
  started: number;
  timeouts: number;
  /** How many conversations the gateway had listed as unanswered. */
  listed: number;
  hedges: HedgeCounts;
  served: ServiceCounts;
}

async function spanMark(ctx: Context, agent: AgentProcess): Promise<SpanMark> {
  return { started: ctx.client.started, timeouts: ctx.client.timeouts, listed: ctx.client.unanswered.length, hedges: await readHedges(agent), served: await ctx.workload.counts() };
}

function spanBetween(ctx: Context, before: SpanMark, after: SpanMark): SpanFigures {
  return {
    started: after.started - before.started,
    unanswered: after.timeouts - before.timeouts,
    lost: {},
    lostIds: ctx.client.unanswered.slice(before.listed, after.listed),
    hedges: hedgesBetween(before.hedges, after.hedges),
    promptRequests: after.served.prompt - before.served.prompt,
  };
}

/** CPU seconds by thread as ms per iteration, largest first. */
function perIteration(seconds: Record<string, number>, iterations: number): Record<string, number> {
  return Object.fromEntries(
    Object.entries(seconds)
      .map(([name, s]): [string, number] => [name, (s * 1000) / iterations])
      .sort((a, b) => b[1] - a[1]),
  );
}

const METRICS = [
  'tg_consumer_request_duration_seconds_sum',
  'tg_consumer_request_duration_seconds_count',
  'tg_agent_llm_duration_seconds_sum',
  'tg_agent_tool_duration_seconds_sum',
  'tg_producer_messages_total',
];

/** The broker one transport talks to: where it listens, its process (for its CPU), its traffic counters. */
interface Bus {
  address: BenchBrokerAddress;
  pid(): number | undefined;
  /** The Pulsar admin API whose per-topic counters give the traffic; undefined on Kafka and RabbitMQ (not reported). */
  trafficUrl: string | undefined;
}

interface Context {
  build: AgentBuild;
  bus: Bus;
  kind: BenchTransportKind;
  transport: Transport;
  workload: Workload;
  client: ConversationClient;
  logDir: string;
}

async function startAgent(ctx: Context, concurrency: number, extra: { nodeFlags?: string[]; env?: Record<string, string> } = {}): Promise<AgentProcess> {
  const agent = await AgentProcess.start({
    build: ctx.build,
    ...ctx.bus.address,
    transport: ctx.kind,
    concurrency,
    configQueues: ctx.workload.configQueues,
    logFile: join(ctx.logDir, `agent-${ctx.kind}-c${concurrency}.log`),
    args: AGENT_ARGS,
    ...extra,
  });
  await agent.waitReady();
  return agent;
}

async function measureConcurrency(ctx: Context, floor: FloorClient, echoPid: number, concurrency: number): Promise<ConcurrencyResult> {
  const loadStart = loadAverage();
  log(`concurrency ${concurrency}: starting the agent (load average ${loadStart})`);
  const agent = await startAgent(ctx, concurrency, { nodeFlags: agentNodeFlags(flags, ctx.logDir) });
  const pids = { agent: agent.pid, broker: ctx.bus.pid(), generator: process.pid, echo: echoPid };
  try {
    // The agent's own CPU with no traffic at all.
    await sleep(1000);
    const idleMeter = new CpuMeter({ agent: agent.pid });
    await sleep(IDLE_S * 1000);
    const idle = idleMeter.stop();
    const agentIdleCpu = (idle.processes.agent ?? Number.NaN) / idle.wall;
    // Warm-up (JIT, connections, tool-set cache), then the window; the agent's counters read around it.
    const window = await measureWindow(ctx.client, {
      concurrency,
      warmupSeconds: WARMUP_S,
      durationSeconds: DURATION_S,
      pids,
      before: async () => {
        const metrics = await agent.metrics(METRICS);
        await agent.sample({ reset: true });
        const marks = { metrics, traffic: await trafficOf(ctx.bus), span: await spanMark(ctx, agent) };
        return { ...marks, threads: threadCpuSeconds(agent.pid) };
      },
      after: async () => {
        const threads = threadCpuSeconds(agent.pid);
        return { threads, traffic: await trafficOf(ctx.bus), metrics: await agent.metrics(METRICS), probe: await agent.sample() };
      },
    });
    const { records: done, cpu } = window;
    // measureWindow returns once every conversation started in the window has ended (or timed out).
    const span = spanBetween(ctx, window.before.span, await spanMark(ctx, agent));
    const before = window.before.metrics;
    const { metrics: after, probe } = window.after;
    const peakRssBytes = agent.memory().peakRss;
    const timeline = concurrency === 1 && TIMELINE > 0 ? new HopTimeline() : undefined;
    if (timeline) {
      log(`concurrency 1: timeline of ${TIMELINE} conversations`);
      await timeline.take(ctx.client, ctx.workload, TIMELINE);
    }
    await agent.stop();
    if (CPU_PROFILE) {
      const title = `tg-agent at concurrency ${concurrency}, ${ctx.kind} transport (${new Date().toISOString().slice(0, 16)}Z)`;
      const svg = await writeFlameGraphOf(ctx.logDir, agent.pid, `flame-${ctx.kind}-c${concurrency}.svg`, title);
      if (svg) log(`flame graph of the agent's CPU profile: ${svg}`);
    }
    for (const at of whereLost(agent.logFile, span.lostIds).values()) span.lost[at] = (span.lost[at] ?? 0) + 1;
    span.lostIds.splice(5);

    const failed = done.filter((r) => r.failed).length;
    const latencies = done.filter((r) => !r.failed).map((r) => r.end - r.start);
    const iterations = after.tg_consumer_request_duration_seconds_count! - before.tg_consumer_request_duration_seconds_count!;
    const own =
      ((after.tg_consumer_request_duration_seconds_sum! - before.tg_consumer_request_duration_seconds_sum!) -
        (after.tg_agent_llm_duration_seconds_sum! - before.tg_agent_llm_duration_seconds_sum!) -
        (after.tg_agent_tool_duration_seconds_sum! - before.tg_agent_tool_duration_seconds_sum!)) *
      1000 /
      iterations;
    const publishes = (after.tg_producer_messages_total! - before.tg_producer_messages_total!) / iterations;
    const topics = trafficBetween(window.before.traffic, window.after.traffic).map(
      ([topic, t]): [string, TopicTraffic] => [topic.replace(/^[a-z-]+:\/\/[^/]+\//, ''), { messages: t.messages / iterations, bytes: t.bytes / iterations }],
    );

    // The floor at the same concurrency, the agent stopped.
    log(`concurrency ${concurrency}: floor (echo, no agent)`);
    const rtts: number[] = [];
    let floorPhase: 'warmup' | 'measure' | 'stop' = 'warmup';
    const floorRun = floor.run(
      concurrency,
      () => floorPhase === 'stop',
      (rtt) => {
        if (floorPhase === 'measure') rtts.push(rtt);
      },
    );
    await sleep(1000);
    const floorMeter = new CpuMeter({ broker: ctx.bus.pid(), generator: process.pid, echo: echoPid });
    floorPhase = 'measure';
    await sleep(FLOOR_S * 1000);
    const floorCpu = floorMeter.stop();
    floorPhase = 'stop';
    await floorRun;

    const floorSummary = summarize(rtts);
    const pathFloor = (CRITICAL_PATH_HOPS / 2) * floorSummary.p50;
    const overheads = latencies.map((l) => (l - pathFloor) / ITERATIONS_PER_CONVERSATION);
    const latency = summarize(latencies);
    return {
      concurrency,
      loadAverage: { start: loadStart, end: loadAverage() },
      windowSeconds: window.windowSeconds,
      conversations: done.length,
      failed,
      conversationsPerSecond: done.length / window.windowSeconds,
      latency,
      floor: floorSummary,
      floorCount: rtts.length,
      overhead: summarize(overheads),
      ratio: latency.p50 / pathFloor,
      agentOwnTimeMs: own,
      agentCpuMsPerIteration: ((cpu.processes.agent ?? Number.NaN) * 1000) / iterations,
      brokerCpuMsPerIteration: ((cpu.processes.broker ?? Number.NaN) * 1000) / iterations,
      agentThreadCpuMsPerIteration: perIteration(threadCpuBetween(window.before.threads, window.after.threads), iterations),
      agentIdleCpu,
      agentCpuMsPerIterationNetOfIdle: (((cpu.processes.agent ?? Number.NaN) - agentIdleCpu * cpu.wall) * 1000) / iterations,
      publishesPerIteration: publishes,
      brokerMessagesPerIteration: topics.reduce((sum, [, t]) => sum + t.messages, 0),
      brokerBytesPerIteration: topics.reduce((sum, [, t]) => sum + t.bytes, 0),
      brokerTopics: topics,
      cpu,
      floorCpu,
      peakRssBytes,
      eventLoop: { p99: probe.eld.p99, max: probe.eld.max },
      ...(timeline ? { timeline: timeline.report(floorSummary.p50) } : {}),
      span,
    };
  } finally {
    if (agent.running) await agent.stop();
  }
}

interface TrustGraphResult extends WindowFigures {
  /** CPU per iteration (2 per finished conversation in the window): TrustGraph's agent, the broker JVM. */
  agentCpuMsPerIteration: number;
  brokerCpuMsPerIteration: number;
  cpu: CpuReading;
  /** The process's peak RSS (VmHWM). */
  peakRssBytes: number;
}

/** TrustGraph's agent at each concurrency, beside the stand-ins on one transport. */
interface TrustGraphRun {
  kind: BenchTransportKind;
  results: TrustGraphResult[];
}

/** The backend a transport's Python stand-ins are configured for. */
function backendName(kind: BenchTransportKind): 'pulsar' | 'kafka' | 'rabbitmq' {
  return isBackendKind(kind) ? kind : 'pulsar';
}

/** Which broker a transport talks to: the two Pulsar transports share one. */
function backendOf(kind: BenchTransportKind): 'Pulsar' | 'Kafka' | 'RabbitMQ' {
  return kind === 'kafka' ? 'Kafka' : kind === 'rabbitmq' ? 'RabbitMQ' : 'Pulsar';
}

/** The same workload against TrustGraph's `agent-manager-react --concurrency c`, on the same broker. */
async function measureTrustGraph(ctx: Context, concurrency: number): Promise<TrustGraphResult> {
  const loadStart = loadAverage();
  log(`${TRUSTGRAPH_AGENT_COMMAND}, concurrency ${concurrency}: starting (load average ${loadStart})`);
  const agent = await startTrustGraphAgent({ kind: ctx.kind, address: ctx.bus.address, concurrency, workload: ctx.workload, client: ctx.client, log });
  try {
    const { records: done, windowSeconds, cpu, after: peakRssBytes } = await measureWindow(ctx.client, {
      concurrency,
      warmupSeconds: TRUSTGRAPH_WARMUP_S,
      durationSeconds: TRUSTGRAPH_DURATION_S,
      pids: { agent: agent.pid, broker: ctx.bus.pid(), generator: process.pid },
      after: () => Promise.resolve(processMemory(agent.pid).peakRss),
    });
    const iterations = done.filter((r) => !r.failed).length * ITERATIONS_PER_CONVERSATION;
    return {
      concurrency,
      loadAverage: { start: loadStart, end: loadAverage() },
      windowSeconds,
      conversations: done.length,
      failed: done.filter((r) => r.failed).length,
      conversationsPerSecond: done.length / windowSeconds,
      latency: summarize(done.filter((r) => !r.failed).map((r) => r.end - r.start)),
      agentCpuMsPerIteration: ((cpu.processes.agent ?? Number.NaN) * 1000) / iterations,
      brokerCpuMsPerIteration: ((cpu.processes.broker ?? Number.NaN) * 1000) / iterations,
      cpu,
      peakRssBytes,
    };
  } finally {
    await agent.stop();
  }
}

/** The broker's per-topic counters now; none where the broker has no such API here (Kafka, RabbitMQ). */
async function trafficOf(bus: Bus): Promise<BrokerTraffic> {
  return bus.trafficUrl === undefined ? new Map() : readBrokerTraffic(bus.trafficUrl);
}

/** The in-process runs (memory transport, no broker). */
function printInProcess(inProcess: InProcessResult[]): string {
  return [
    '### Without the transport: the same app on the in-process memory bus (no broker, no WebSocket)\n',
    table(
      ['concurrency', 'iterations/s', 'iteration p50', 'iteration p99', 'CPU/iteration (agent + stand-ins + gateway)', 'failed'],
      inProcess.map((r) => [
        String(r.concurrency),
        num(r.conversationsPerSecond * ITERATIONS_PER_CONVERSATION, 0),
        ms(r.iteration.p50, 3),
        ms(r.iteration.p99, 3),
        ms(r.cpuMsPerIteration, 3),
        String(r.failed),
      ]),
    ),
  ].join('\n');
}

function printResults(results: ConcurrencyResult[], acks: { nonPersistent: Summary; persistent: Summary }, inProcess: InProcessResult[]): string {
  const out: string[] = [];
  if (inProcess.length > 0) out.push(printInProcess(inProcess), '');
  out.push('### Throughput and per-iteration overhead\n');
  out.push(
    table(
      ['concurrency', 'conversations/s', 'conversation p50 / p99', 'floor RTT p50 / p99', '4.5 × floor p50', 'ratio', 'overhead/iteration p50', 'p99', 'agent peak RSS', 'failed'],
      results.map((r) => [
        String(r.concurrency),
        num(r.conversationsPerSecond, 1),
        `${ms(r.latency.p50)} / ${ms(r.latency.p99)}`,
        `${ms(r.floor.p50)} / ${ms(r.floor.p99)}`,
        ms((CRITICAL_PATH_HOPS / 2) * r.floor.p50),
        `${r.ratio.toFixed(2)}×`,
        ms(r.overhead.p50),
        ms(r.overhead.p99),
        mib(r.peakRssBytes),
        `${r.failed}/${r.conversations}`,
      ]),
    ),
  );
  out.push('\n### Where the time and the CPU go (measured window)\n');
  out.push(
    table(
      ['concurrency', 'agent own time/iteration (metrics, mean)', 'agent CPU/iteration', '… net of idle', 'agent idle CPU', 'publishes/iteration', 'broker in: messages / bytes per iteration', 'CPU: agent', 'broker', 'load generator + stand-ins', 'everything else', 'floor CPU: broker / echo', 'event-loop delay p99 / max', 'load average start → end'],
      results.map((r) => [
        String(r.concurrency),
        ms(r.agentOwnTimeMs),
        ms(r.agentCpuMsPerIteration),
        ms(r.agentCpuMsPerIterationNetOfIdle),
        `${(r.agentIdleCpu * 100).toFixed(1)} %`,
        num(r.publishesPerIteration, 1),
        `${num(r.brokerMessagesPerIteration, 1)} / ${num(r.brokerBytesPerIteration, 0)} B`,
        coreShare(r.cpu.processes.agent ?? Number.NaN, r.cpu.wall),
        coreShare(r.cpu.processes.broker ?? Number.NaN, r.cpu.wall),
        coreShare(r.cpu.processes.generator ?? Number.NaN, r.cpu.wall),
        coreShare(r.cpu.others, r.cpu.wall),
        `${coreShare(r.floorCpu.processes.broker ?? Number.NaN, r.floorCpu.wall)} / ${coreShare(r.floorCpu.processes.echo ?? Number.NaN, r.floorCpu.wall)}`,
        `${ms(r.eventLoop.p99, 1)} / ${ms(r.eventLoop.max, 1)}`,
        `${r.loadAverage.start} → ${r.loadAverage.end}`,
      ]),
    ),
  );
  out.push('\n### The agent\'s CPU per iteration by thread (/proc/<pid>/task; `main` is the event loop)\n');
  out.push(
    table(
      ['concurrency', 'thread', 'CPU/iteration', 'share'],
      results.flatMap((r) => {
        const total = Object.values(r.agentThreadCpuMsPerIteration).reduce((sum, v) => sum + v, 0);
        return Object.entries(r.agentThreadCpuMsPerIteration)
          .filter(([, v]) => v > 0)
          .map(([name, v]) => [String(r.concurrency), name, ms(v, 3), `${((v / total) * 100).toFixed(0)} %`]);
      }),
    ),
  );
  for (const r of results) if (r.timeline) out.push('\n### Timeline of one conversation at concurrency 1 (--timeline)\n', r.timeline);
  out.push('\n### Published to the broker per iteration, by topic (the broker\'s counters, every client)\n');
  out.push(
    table(
      ['concurrency', 'topic', 'messages', 'bytes'],
      results.flatMap((r) => r.brokerTopics.map(([topic, t]) => [String(r.concurrency), topic, num(t.messages, 2), num(t.bytes, 0)])),
    ),
  );
  out.push('\n### Publish → broker acknowledgement, one producer, sequential (what each awaited publish of the agent costs)\n');
  out.push(
    table(
      ['topic', 'p50', 'p99', 'samples'],
      [
        ['non-persistent (responses, next)', ms(acks.nonPersistent.p50), ms(acks.nonPersistent.p99), String(acks.nonPersistent.count)],
        ['persistent (explainability)', ms(acks.persistent.p50), ms(acks.persistent.p99), String(acks.persistent.count)],
      ],
    ),
  );
  return out.join('\n');
}

interface SoakSample {
  seconds: number;
  conversations: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

async function soak(ctx: Context): Promise<{ samples: SoakSample[]; text: string }> {
  log(`soak: ${SOAK_S} s at concurrency ${SOAK_CONCURRENCY}, a sample every ${SAMPLE_EVERY_S} s (heap read right after a full GC)`);
  const agent = await startAgent(ctx, SOAK_CONCURRENCY, { nodeFlags: ['--expose-gc'] });
  const loadStart = loadAverage();
  const samples: SoakSample[] = [];
  let conversations = 0;
  let failed = 0;
  let stop = false;
  const started = performance.now();
  const latencies: number[] = [];
  const running = ctx.client.run(
    SOAK_CONCURRENCY,
    () => stop,
    (r) => {
      conversations++;
      if (r.failed) failed++;
      else if (latencies.length < 1_000_000) latencies.push(r.end - r.start);
    },
  );
  try {
    const meter = new CpuMeter({ agent: agent.pid, broker: ctx.bus.pid(), generator: process.pid });
    while ((performance.now() - started) / 1000 < SOAK_S) {
      const sample = await agent.sample({ gc: true });
      const seconds = (performance.now() - started) / 1000;
      samples.push({
        seconds,
        conversations,
        rss: sample.memory.rss,
        heapUsed: sample.memory.heapUsed,
        heapTotal: sample.memory.heapTotal,
        external: sample.memory.external,
        arrayBuffers: sample.memory.arrayBuffers,
      });
      if (samples.length % Math.max(1, Math.round(60 / SAMPLE_EVERY_S)) === 1) {
        log(`soak ${Math.round(seconds)} s: ${conversations} conversations, RSS ${mib(sample.memory.rss)}, heap ${mib(sample.memory.heapUsed)}`);
      }
      await sleep(SAMPLE_EVERY_S * 1000);
    }
    const cpu = meter.stop();
    stop = true;
    await running;
    const peak = agent.memory().peakRss;
    await agent.stop();

    const steady = samples.filter((s) => s.seconds >= SOAK_WARMUP_S);
    const first = steady[0]!;
    const last = steady[steady.length - 1]!;
    const perHour = (key: keyof SoakSample): number => slope(steady.map((s) => ({ x: s.seconds / 3600, y: s[key] })));
    const range = (key: keyof SoakSample): string => {
      const values = steady.map((s) => s[key]);
      return `${mib(Math.min(...values))} – ${mib(Math.max(...values))}`;
    };
    const lat = summarize(latencies);
    const text = [
      `### Memory soak: ${Math.round(SOAK_S)} s, concurrency ${SOAK_CONCURRENCY}\n`,
      `${num(conversations)} conversations (${num(conversations / ((performance.now() - started) / 1000), 1)}/s, ${failed} failed), latency p50 ${ms(lat.p50)}, p99 ${ms(lat.p99)}; ` +
        `agent CPU ${coreShare(cpu.processes.agent ?? Number.NaN, cpu.wall)}, broker ${coreShare(cpu.processes.broker ?? Number.NaN, cpu.wall)}; ` +
        `load average ${loadStart} → ${loadAverage()}. Samples every ${SAMPLE_EVERY_S} s, heap after a full GC; ` +
        `growth measured after a ${SOAK_WARMUP_S} s warm-up (${steady.length} samples).\n`,
      table(
        ['measure', `after warm-up (${Math.round(first.seconds)} s)`, `end (${Math.round(last.seconds)} s)`, 'growth', 'trend (least squares)', 'range after warm-up'],
        (['rss', 'heapUsed', 'heapTotal', 'external', 'arrayBuffers'] as const).map((key) => [
          key === 'rss' ? 'RSS' : key,
          mib(first[key]),
          mib(last[key]),
          mib(last[key] - first[key], 2),
          `${(perHour(key) / 1048576).toFixed(2)} MiB/hour`,
          range(key),
        ]),
      ),
      `\nPeak RSS (VmHWM): ${mib(peak)}.`,
      '\nRSS and heap over time (one row a minute):\n',
      table(
        ['time', 'conversations', 'RSS', 'heap used (after GC)', 'heap total', 'external'],
        samples
          .filter((_, i) => i % Math.max(1, Math.round(60 / SAMPLE_EVERY_S)) === 0 || i === samples.length - 1)
          .map((s) => [`${Math.round(s.seconds)} s`, num(s.conversations), mib(s.rss), mib(s.heapUsed, 2), mib(s.heapTotal), mib(s.external, 2)]),
      ),
    ].join('\n');
    return { samples, text };
  } finally {
    stop = true;
    if (agent.running) await agent.stop();
  }
}

await withCleanup(async (defer) => {
  const loadAtStart = await waitForLowLoad(MAX_LOAD, 10 * 60_000, log);
  const logDir = mkdtempSync(join(tmpdir(), 'tg-agent-bench-logs-'));
  log(`agent logs in ${logDir}${KEEP_LOGS ? '' : ' (removed at the end; --keep-logs keeps them)'}`);
  if (!KEEP_LOGS) defer(() => rmSync(logDir, { recursive: true, force: true }));
  const inProcess: InProcessResult[] = [];
  if (SOAK_S === 0 && IN_PROCESS_S > 0) {
    for (const concurrency of CONCURRENCIES) {
      log(`in-process (memory transport), concurrency ${concurrency}`);
      inProcess.push(await measureInProcess(concurrency, IN_PROCESS_S, 2, join(logDir, `in-process-c${concurrency}.log`), AGENT_ARGS));
    }
  }
  if (IN_PROCESS_ONLY) {
    console.log(`load average before the run: ${loadAtStart}, at the end: ${loadAverage()}\n`);
    console.log(printInProcess(inProcess));
    writeJson(JSON_OUT, { kind: 'iteration', runs: [], inProcess, trustGraph: [] });
    return;
  }
  const build = await buildAgent(log);
  defer(() => build.remove());
  const broker = await startBenchBroker({ log });
  defer(() => broker.stop());
  log(`broker: ${broker.webSocketUrl} (pid ${broker.pid ?? 'unknown'}, Pulsar ${broker.version})`);
  const kinds = TRANSPORTS_FLAG ?? (await availableTransports());
  log(`transports: ${kinds.join(', ')}`);
  const nodes = await startBackendNodes(kinds, defer, log);
  const busOf = (kind: BenchTransportKind): Bus => {
    const node = isBackendKind(kind) ? nodes[kind] : undefined;
    if (node) return { address: { webSocketUrl: '', serviceUrl: '', ...node.address }, pid: () => node.pid, trafficUrl: undefined };
    return { address: broker, pid: () => broker.pid, trafficUrl: broker.webServiceUrl };
  };

  /** Stand-ins, gateway and (for the floor) echo on one transport; stopped by the returned function. */
  const contextFor = async (kind: BenchTransportKind): Promise<{ ctx: Context; stop(): Promise<void> }> => {
    const stops: (() => Promise<unknown>)[] = [];
    const bus = busOf(kind);
    const transport = await createBenchTransport(kind, bus.address);
    stops.push(() => transport.close());
    const workload = await startWorkload({ transport, ...(STAND_INS === 'python' ? { pythonBrokerUrl: pythonBrokerUrl(bus.address, backendName(kind)) } : {}) });
    stops.push(() => workload.stop());
    // The gateway on a connection of its own, as TrustGraph's gateway is a process of its own.
    const gatewayTransport = await createBenchTransport(kind, bus.address);
    stops.push(() => gatewayTransport.close());
    const client = new ConversationClient(gatewayTransport, workload.topics);
    await client.start();
    stops.push(() => client.stop());
    return {
      ctx: { build, bus, kind, transport, workload, client, logDir },
      stop: async () => {
        for (const stop of stops.reverse()) await stop();
      },
    };
  };

  if (SOAK_S > 0) {
    const { ctx, stop } = await contextFor(kinds[0] ?? 'websocket');
    defer(stop);
    const { samples, text } = await soak(ctx);
    console.log(header(`tg-agent iteration benchmark: memory soak (${ctx.kind} transport)`, broker, [`load average before the run: ${loadAtStart}`]));
    console.log(text);
    writeJson(JSON_OUT, { kind: 'soak', transport: ctx.kind, samples });
    return;
  }

  const runs: { kind: BenchTransportKind; results: ConcurrencyResult[]; acks: { nonPersistent: Summary; persistent: Summary } }[] = [];
  /**
   * TrustGraph's agent runs once per backend: on Pulsar beside the stand-ins of the native run when there is
   * one (TrustGraph's processors speak the binary protocol), on Kafka and RabbitMQ beside that run's.
   */
  const pulsarKinds = kinds.filter((kind) => !isBackendKind(kind));
  const trustGraphKinds = new Set<BenchTransportKind>([...(pulsarKinds.includes('native') ? ['native' as const] : pulsarKinds.slice(0, 1)), ...kinds.filter(isBackendKind)]);
  const trustGraph: TrustGraphRun[] = [];
  for (const kind of kinds) {
    log(`--- ${kind} transport ---`);
    const { ctx, stop } = await contextFor(kind);
    try {
      const floor = new FloorClient(ctx.transport, ctx.workload.workspace);
      await floor.start();
      const echo = await startEcho(build, ctx.bus.address, kind, floor.requestTopic, floor.responseTopic, join(logDir, `echo-${kind}.log`));
      try {
        log('publish→ack latency of single sends');
        const acks = {
          nonPersistent: summarize(await publishAckLatencies(ctx.transport, `non-persistent://tg/response/bench-ack-${kind}-${ctx.workload.workspace}`, REQUEST_BODY, 2000)),
          persistent: summarize(await publishAckLatencies(ctx.transport, `persistent://tg/flow/bench-ack-${kind}-${ctx.workload.workspace}`, REQUEST_BODY, 2000)),
        };
        const results: ConcurrencyResult[] = [];
        for (const concurrency of CONCURRENCIES) results.push(await measureConcurrency(ctx, floor, echo.pid, concurrency));
        runs.push({ kind, results, acks });
      } finally {
        await echo.stop();
        await floor.close();
      }
    } finally {
      await stop();
    }
    if (TRUSTGRAPH && trustGraphKinds.has(kind)) {
      log(`--- ${TRUSTGRAPH_AGENT_COMMAND} (TrustGraph 2.11.1), stand-ins and gateway on ${kind} ---`);
      // A workload of its own (new topics): on Kafka TrustGraph's reply consumers start at the earliest offset
      // and would first read every reply of the runs before.
      const { ctx, stop } = await contextFor(kind);
      const config = await serveTrustGraphConfig(ctx.transport, ctx.workload);
      try {
        const results: TrustGraphResult[] = [];
        for (const concurrency of CONCURRENCIES) results.push(await measureTrustGraph(ctx, concurrency));
        trustGraph.push({ kind, results });
      } finally {
        await config.stop();
        await stop();
      }
    }
  }
  console.log(
    header('tg-agent iteration benchmark', broker, [
      `load average before the run: ${loadAtStart}`,
      `transports: ${kinds.join(', ')} (agent, stand-ins, gateway and echo all on the same one)`,
      `each concurrency: the agent idle for ${IDLE_S} s, ${WARMUP_S} s warm-up, ${DURATION_S} s measured, then ${FLOOR_S} s of floor; agent compiled in ${build.seconds.toFixed(1)} s`,
      `2 iterations per conversation (one MCP tool call, then the answer); overhead/iteration = (conversation − ${CRITICAL_PATH_HOPS / 2} × floor RTT p50) / 2`,
      ...(AGENT_ARGS.length > 0 ? [`tg-agent also run with: ${AGENT_ARGS.join(' ')}`] : []),
      `services: ${STAND_INS === 'python' ? "TrustGraph 2.11.1's own Python client (trustgraph-base's async backend, ReceiverPool, SenderPool), one process per service" : 'lean JavaScript stand-ins in the load generator'}`,
    ]),
  );
  console.log(printSideBySide(runs));
  console.log(printSpans(runs));
  console.log(printCpuRatio(runs));
  for (const run of trustGraph) console.log(printTrustGraph(runs, run));
  for (const [i, run] of runs.entries()) {
    console.log(`\n## ${run.kind} transport\n`);
    console.log(printResults(run.results, run.acks, i === 0 ? inProcess : []));
  }
  writeJson(JSON_OUT, { kind: 'iteration', runs, inProcess, trustGraph });
  const chart = flags.get('chart');
  if (chart) await writeSvg(chart, iterationChartSpec({ kind: 'iteration', runs, trustGraph }, runNote(`npm run bench:iteration -- ${shownFlags()}`, `load average ${loadAtStart} at the start`)));
});

/** One row per concurrency, one column group per transport: throughput, p50, conversations lost. */
function printSideBySide(runs: { kind: BenchTransportKind; results: ConcurrencyResult[] }[]): string {
  const rows = CONCURRENCIES.map((concurrency) => [
    String(concurrency),
    ...runs.flatMap((run) => {
      const r = run.results.find((x) => x.concurrency === concurrency);
      return r ? [num(r.conversationsPerSecond, 1), ms(r.latency.p50), `${r.failed}/${r.conversations}`] : ['—', '—', '—'];
    }),
  ]);
  return [
    '### Side by side\n',
    table(['concurrency', ...runs.flatMap((run) => [`${run.kind} conversations/s`, `${run.kind} p50`, `${run.kind} lost`])], rows),
  ].join('\n');
}

/** Per transport and concurrency: conversations with no final message within 30 s, and the hedged calls that cost. */
function printSpans(runs: { kind: BenchTransportKind; results: ConcurrencyResult[] }[]): string {
  const rows = runs.flatMap((run) =>
    run.results.map((r) => [
      run.kind,
      String(r.concurrency),
      num(r.span.started),
      r.span.unanswered === 0 ? '0' : `${r.span.unanswered} (${Object.entries(r.span.lost).map(([at, n]) => `${at}: ${n}`).join(', ')}; ${r.span.lostIds.join(', ')})`,
      `${duplicates(r.span.hedges)} (${r.span.hedges.hedge_first} / ${r.span.hedges.original_first} / ${r.span.hedges.neither})`,
      String(r.span.hedges.over_budget),
      `${num(r.span.promptRequests)} (${(r.span.promptRequests / Math.max(1, r.span.started)).toFixed(3)})`,
      `${r.loadAverage.start} → ${r.loadAverage.end}`,
    ]),
  );
  return [
    '\n### Conversations without a final message within 30 s, and hedged calls (from the window\'s start until every conversation started in it ended)\n',
    table(['transport', 'concurrency', 'conversations started', 'no final message within 30 s (where it stopped: see bench/support/lost-conversations.ts)', 'hedges sent (hedge first / original first / neither)', 'over budget', 'prompt requests received by the service (per conversation)', 'load average'], rows),
  ].join('\n');
}

/** Agent CPU per iteration against the broker's, per transport and concurrency (goal: agent ≤ ⅓ of broker). */
function printCpuRatio(runs: { kind: BenchTransportKind; results: ConcurrencyResult[] }[]): string {
  const rows = runs.flatMap((run) =>
    run.results.map((r) => [
      run.kind,
      String(r.concurrency),
      ms(r.agentCpuMsPerIteration, 3),
      ms(r.brokerCpuMsPerIteration, 3),
      `${(r.agentCpuMsPerIteration / r.brokerCpuMsPerIteration).toFixed(2)}`,
      `${r.ratio.toFixed(2)}×`,
      `${coreShare(r.cpu.processes.agent ?? Number.NaN, r.cpu.wall)} / ${coreShare(r.cpu.processes.broker ?? Number.NaN, r.cpu.wall)}`,
      coreShare(r.cpu.others, r.cpu.wall),
    ]),
  );
  return [
    '\n### Agent CPU against broker CPU, per iteration (measured window; goal at concurrency 64: agent / broker ≤ 0.33), and latency against the floor (goal at concurrency 1: ≤ 1.5×)\n',
    table(['transport', 'concurrency', 'agent CPU/iteration', 'broker CPU/iteration', 'agent / broker', `p50 / (${CRITICAL_PATH_HOPS / 2} × floor RTT p50)`, 'CPU agent / broker (share of a core)', 'everything else'], rows),
  ].join('\n');
}

/** TrustGraph's agent on the same workload and backend, and tg-agent's conversations/s there as a multiple of it. */
function printTrustGraph(allRuns: { kind: BenchTransportKind; results: ConcurrencyResult[] }[], { kind, results }: TrustGraphRun): string {
  const runs = allRuns.filter((run) => backendOf(run.kind) === backendOf(kind));
  const rows = results.map((t) => [
    String(t.concurrency),
    num(t.conversationsPerSecond, 1),
    `${ms(t.latency.p50)} / ${ms(t.latency.p99)}`,
    `${t.failed}/${t.conversations}`,
    ms(t.agentCpuMsPerIteration, 2),
    ms(t.brokerCpuMsPerIteration, 2),
    `${coreShare(t.cpu.processes.agent ?? Number.NaN, t.cpu.wall)} / ${coreShare(t.cpu.processes.broker ?? Number.NaN, t.cpu.wall)}`,
    mib(t.peakRssBytes),
    ...runs.map((run) => {
      const r = run.results.find((x) => x.concurrency === t.concurrency);
      return r ? `${num(r.conversationsPerSecond, 1)} (${(r.conversationsPerSecond / t.conversationsPerSecond).toFixed(1)}×)` : '—';
    }),
  ]);
  return [
    `\n### TrustGraph's ${TRUSTGRAPH_AGENT_COMMAND} 2.11.1 on the same workload and ${backendOf(kind)} broker (stand-ins and gateway on ${kind}; --concurrency c)\n`,
    table(
      ['concurrency', 'conversations/s', 'p50 / p99', 'failed', 'agent CPU/iteration', 'broker CPU/iteration', 'CPU agent / broker', 'agent peak RSS', ...runs.map((run) => `tg-agent ${run.kind} conversations/s (ratio)`)],
      rows,
    ),
  ].join('\n');
}
