/**
 * bench:growth's conversations dimension: the real agent (its own process, bench/support/agent-process.ts) on a
 * real broker, `--concurrency n` and the gateway keeping n conversations in flight, with the zero-latency prompt
 * and MCP tool stand-ins of bench:iteration (bench/support/workload.ts). The agent is the bottleneck, so
 * n conversations are in flight in it (or waiting at the broker for it) the whole window, and the latency is
 * n / throughput (Little's law): what grows worse than that is the agent's cost per conversation.
 *
 * For each n: the agent started with `--expose-gc`, its heap after a full GC and RSS read idle; the gateway
 * starts n conversations; once n have ended (one full turn-over of what is in flight) and the warm-up has passed,
 * the window: conversations/s, latency p50 / p99 of the conversations that ended in it, the agent's CPU per iteration
 * (/proc, over the iterations the agent itself counted in the window), and at its end, with the n conversations still
 * in flight, heap after a full GC and RSS again. Memory per conversation = (in flight − idle) / n.
 *
 * Why the agent's own count: with thousands in flight the conversations end in waves (the start's burst moves
 * through the service-call queues together), so the conversations that end in a window shorter than a turn-over
 * are not the work done in it; the agent's CPU over its own finished iterations is.
 */
import { join } from 'node:path';
import { AgentProcess } from './agent-process.js';
import type { AgentBuild } from './build.js';
import { writeFlameGraphOf } from './flame-graph.js';
import { CpuMeter, loadAverage1, threadCpuBetween, threadCpuSeconds } from './proc.js';
import { sleep, summarize } from './stats.js';
import { ConversationClient, type ConversationRecord, type Workload } from './workload.js';
import type { BenchBrokerAddress, BenchTransportKind } from './transport.js';
import type { GrowthRow } from './growth-in-process.js';

/** The agent's count of the iterations it finished (one per agent request it handled). */
const ITERATIONS_METRIC = 'tg_consumer_request_duration_seconds_count';

/** What the agent did in a window, read from /proc and its own counter. */
export interface WindowWork {
  windowSeconds: number;
  /** Iterations the agent finished in the window (its counter). */
  iterations: number;
  /** The agent's CPU seconds in the window: all threads, and the event loop's. */
  cpuSeconds: number;
  eventLoopCpuSeconds: number;
}

/** The agent's CPU per iteration it finished in the window, all threads and the event loop alone. */
export function perIteration(work: WindowWork): Pick<GrowthRow, 'iterationsPerSecond' | 'cpuMsPerIteration' | 'eventLoopMsPerIteration'> {
  const perIt = (seconds: number): number => (work.iterations > 0 ? (seconds * 1000) / work.iterations : Number.NaN);
  return {
    iterationsPerSecond: work.iterations / work.windowSeconds,
    cpuMsPerIteration: perIt(work.cpuSeconds),
    eventLoopMsPerIteration: perIt(work.eventLoopCpuSeconds),
  };
}

/** How long the conversations still in flight after the window may take to end before the next size starts. */
const STRAGGLERS_MS = 30_000;

export interface ConversationsSetup {
  build: AgentBuild;
  address: BenchBrokerAddress;
  kind: BenchTransportKind;
  workload: Workload;
  /** The gateway, built with a timeout long enough for n / throughput. */
  client: ConversationClient;
  logDir: string;
  warmupSeconds: number;
  durationSeconds: number;
  /** More node flags for the agent (options.ts `agentNodeFlags`). */
  nodeFlags?: string[];
  /** The agent writes a V8 CPU profile of the whole size into `logDir` (`--cpu-prof` among `nodeFlags`): drawn as a flame graph beside it. */
  cpuProfile?: boolean;
  log: (line: string) => void;
}

/** An error text with its request id and workspace left out, so that errors of one kind count together. */
export function errorKind(error: string | undefined): string {
  return (error ?? 'unknown').replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>').replace(/:bench-[^:\s]+:/g, ':<workspace>:');
}

/** The failed conversations counted by what ended them: a service's reply lost, the agent's refusal, the gateway's timeout. */
function failedByKind(records: readonly ConversationRecord[]): Pick<GrowthRow, 'failedNoReply' | 'failedOverloaded' | 'failedGatewayTimeout'> {
  const failed = records.filter((r) => r.failed).map((r) => r.error ?? '');
  return {
    failedNoReply: failed.filter((e) => e.includes('no response to request')).length,
    failedOverloaded: failed.filter((e) => e.includes('overloaded')).length,
    failedGatewayTimeout: failed.filter((e) => e === 'timeout').length,
  };
}

export async function measureConversations(setup: ConversationsSetup, inFlight: number): Promise<GrowthRow> {
  const { build, address, kind, workload, client } = setup;
  const loadStart = loadAverage1();
  const agent = await AgentProcess.start({
    build,
    ...address,
    transport: kind,
    concurrency: inFlight,
    configQueues: workload.configQueues,
    logFile: join(setup.logDir, `agent-${kind}-c${inFlight}.log`),
    nodeFlags: ['--expose-gc', ...(setup.nodeFlags ?? [])],
  });
  try {
    await agent.waitReady();
    await sleep(1000);
    const idle = (await agent.sample({ gc: true })).memory;
    let phase: 'warmup' | 'measure' | 'stop' = 'warmup';
    let ended = 0;
    const records: ConversationRecord[] = [];
    const running = client.run(
      inFlight,
      () => phase === 'stop',
      (record) => {
        ended++;
        if (phase === 'measure') records.push(record);
      },
    );
    try {
      const warmupEnds = performance.now() + setup.warmupSeconds * 1000;
      while (ended < inFlight || performance.now() < warmupEnds) await sleep(200);
      setup.log(`${inFlight} in flight: warmed up (${ended} conversations ended), measuring ${setup.durationSeconds} s`);
      const iterationsBefore = (await agent.metrics([ITERATIONS_METRIC]))[ITERATIONS_METRIC]!;
      const threadsBefore = threadCpuSeconds(agent.pid);
      const meter = new CpuMeter({ agent: agent.pid });
      const endedBefore = ended;
      const windowStart = performance.now();
      phase = 'measure';
      await sleep(setup.durationSeconds * 1000);
      const windowSeconds = (performance.now() - windowStart) / 1000;
      // The counter read first and the CPU right after, as around the window's start: the same span for both.
      const iterations = (await agent.metrics([ITERATIONS_METRIC]))[ITERATIONS_METRIC]! - iterationsBefore;
      const cpu = meter.stop();
      const threads = threadCpuBetween(threadsBefore, threadCpuSeconds(agent.pid));
      const finished = ended - endedBefore;
      const busy = (await agent.sample({ gc: true })).memory;
      phase = 'stop';
      // A conversation lost on a loaded machine waits out the gateway's long timeout: not this run's business.
      await Promise.race([running, sleep(STRAGGLERS_MS)]);
      const ok = records.filter((r) => !r.failed);
      const kinds = new Map<string, number[]>();
      for (const r of records.filter((f) => f.failed)) {
        const kind = errorKind(r.error);
        kinds.set(kind, [...(kinds.get(kind) ?? []), r.end - r.start]);
      }
      for (const [kind, took] of [...kinds].sort((a, b) => b[1].length - a[1].length)) {
        setup.log(`${inFlight} in flight: ${took.length} failed after ${summarize(took).p50.toFixed(0)} ms (p50): ${kind}`);
      }
      const latency = summarize(ok.map((r) => r.end - r.start));
      return {
        size: inFlight,
        conversationsPerSecond: finished / windowSeconds,
        p50Ms: latency.p50,
        p99Ms: latency.p99,
        failed: records.length - ok.length,
        ...failedByKind(records),
        ...perIteration({ windowSeconds, iterations, cpuSeconds: cpu.processes.agent ?? Number.NaN, eventLoopCpuSeconds: threads.main ?? Number.NaN }),
        heapBytes: busy.heapUsed - idle.heapUsed,
        rssBytes: busy.rss - idle.rss,
        heapPerConversationBytes: (busy.heapUsed - idle.heapUsed) / inFlight,
        rssPerConversationBytes: (busy.rss - idle.rss) / inFlight,
        idleHeapBytes: idle.heapUsed,
        idleRssBytes: idle.rss,
        loadStart,
        loadEnd: loadAverage1(),
      };
    } finally {
      phase = 'stop';
    }
  } finally {
    await agent.stop();
    if (setup.cpuProfile) {
      const title = `tg-agent with ${inFlight} conversations in flight, ${kind} transport (${new Date().toISOString().slice(0, 16)}Z)`;
      const svg = await writeFlameGraphOf(setup.logDir, agent.pid, `flame-${kind}-c${inFlight}.svg`, title);
      if (svg) setup.log(`flame graph of the agent's CPU profile: ${svg}`);
    }
  }
}
