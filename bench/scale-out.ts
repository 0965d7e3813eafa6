/**
 * Scale-out: 1, 2 and 4 replicas of the agent on one flow, sharing its request subscription.
 *
 *   npm run bench:scale-out                                  replicas 1, 2, 4; websocket then native
 *   npm run bench:scale-out -- --replicas 1,2 --transports native --duration 10
 *
 * Takes about 5 min for 1, 2 and 4 replicas on two transports (plus up to 10 min waiting for the
 * 1-minute load average to drop under --max-load).
 *
 * Needs: a Pulsar broker: Java 17+ and Maven (tools/pulsar-standalone, from Maven Central jars), a
 * Docker engine, or PULSAR_URL.
 *
 * Each replica is the real agent in its own process (bench/support/agent-process.ts), `--concurrency c`, all on
 * the same broker, config and stand-ins. Every replica subscribes to the flow's request topic under the same
 * Shared subscription, so a request — a first request or a `next` message of a conversation another replica
 * started — goes to any one of them. The gateway keeps `--in-flight` conversations going for the measured
 * window, then stops asking, waits for the last ones and a few seconds more for late duplicates, and counts
 * the `end_of_dialog` responses per request id:
 *
 *  - ended: exactly one, with the expected answer; error: exactly one, an error or a wrong answer;
 *  - lost: none (the conversation timed out, `--timeout` s, and nothing came until the count); duplicated: more
 *    than one; unsent: the gateway's own publish of the first request failed (its error is printed).
 *
 * A lost conversation prints its request id: with `--keep-logs`, an audit line with that `request_id` in an agent
 * log means the agent ended it (its answer was lost on the way back), none means the request never got to an
 * iteration. The broker's drop rates on the workload's non-persistent topics are polled during the run and
 * printed when not zero (the broker updates them every `statsUpdateFrequencyInSecs`, 60 s by default).
 *
 * On a 2-core machine replicas compete with each other and the broker for the same cores: the figure shows
 * correctness and overhead, not speed-up.
 *
 * Flags: --replicas 1,2,4  --transports websocket,native  --in-flight 64  --concurrency 64 (per replica)
 *        --duration 20 (s)  --warmup 3  --timeout 30  --max-load 1.5  --json <file>  --keep-logs
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { queueToTopic, topicAdminUrl } from '../src/bus/topics.js';
import type { Transport } from '../src/bus/transport.js';
import { uniqueSuffix } from '../dev/flow-config.js';
import { startReplicas, type AgentProcess } from './support/agent-process.js';
import { startBenchBroker, type BenchBroker } from './support/broker.js';
import { buildAgent, type AgentBuild } from './support/build.js';
import { coreShare, CpuMeter, loadAverage, waitForLowLoad, type CpuReading } from './support/proc.js';
import { header, log, withCleanup, writeJson } from './support/run.js';
import { benchFlags, commonOptions, metricSum } from './support/options.js';
import { ms, num, numberFlag, sleep, summarize, table, type Summary } from './support/stats.js';
import { availableTransports, createBenchTransport, type BenchTransportKind } from './support/transport.js';
import { ITERATIONS_PER_CONVERSATION, REQUEST_BODY, startWorkload, type Workload } from './support/workload.js';

const flags = benchFlags(import.meta.url);
const REPLICAS = (flags.get('replicas') ?? '1,2,4').split(',').map(Number);
const { transports: TRANSPORTS_FLAG, durationSeconds: DURATION_S, warmupSeconds: WARMUP_S, maxLoad: MAX_LOAD, jsonOut: JSON_OUT, keepLogs: KEEP_LOGS } =
  commonOptions(flags, { durationSeconds: 20, warmupSeconds: 3 });
const IN_FLIGHT = numberFlag(flags, 'in-flight', 64);
const CONCURRENCY = numberFlag(flags, 'concurrency', 64);
const TIMEOUT_S = numberFlag(flags, 'timeout', 30);
/** After the last conversation: how long to keep listening for a second end_of_dialog. */
const LATE_DUPLICATE_WAIT_MS = 3000;

interface ScaleResult {
  transport: BenchTransportKind;
  replicas: number;
  /** Conversations asked for in the whole run (warm-up included): every one is counted. */
  asked: number;
  /** The gateway's publish of the first request failed: never reached the broker, so not counted as lost. */
  unsent: number;
  ended: number;
  errors: number;
  lost: number;
  /** Lost after some responses had arrived (the first request was answered, a later iteration never ended). */
  lostMidway: number;
  duplicated: number;
  errorSamples: string[];
  windowSeconds: number;
  /** Conversations that ended in the measured window, per second. */
  conversationsPerSecond: number;
  latency: Summary;
  /** Iterations each replica handled in the window (from its metrics). */
  iterationsPerReplica: number[];
  /** Agent CPU summed over the replicas, and the broker's, per iteration in the window. */
  agentCpuMsPerIteration: number;
  brokerCpuMsPerIteration: number;
  cpu: CpuReading;
  nextPublished: number;
  nextReceived: number;
  /** The broker's drop rates (msg/s, the highest seen) on the workload's non-persistent topics; empty: none. */
  brokerDrops: Record<string, number>;
}

/** The gateway: every end_of_dialog is counted per id, also after the conversation has ended. */
class CountingGateway {
  private readonly ends = new Map<string, { count: number; responses: number; bad: boolean; error: string; answer: string; start: number; end: number }>();
  private readonly waiting = new Map<string, () => void>();
  /** Conversations whose first request could not be published (not lost by the agent or the broker). */
  private readonly unsent = new Map<string, string>();

  private constructor(
    private readonly transport: Transport,
    private readonly topics: Record<string, string>,
  ) {}

  static async start(transport: Transport, topics: Record<string, string>): Promise<{ gateway: CountingGateway; stop(): Promise<void> }> {
    const gateway = new CountingGateway(transport, topics);
    const consumer = await transport.subscribe({
      topic: queueToTopic(topics.response!),
      subscription: `bench-scale-gateway-${uniqueSuffix(6)}`,
      subscriptionType: 'Exclusive',
      handler: async (message) => {
        await message.ack();
        gateway.onResponse(message.properties.id ?? '', message.payload);
      },
    });
    const producer = await transport.createProducer(queueToTopic(topics.request!));
    gateway.send = (id) => producer.send({ payload: REQUEST_BODY, properties: { id } });
    return {
      gateway,
      stop: async () => {
        await Promise.allSettled([consumer.close({ unsubscribe: true }), producer.close()]);
      },
    };
  }

  private send: (id: string) => Promise<void> = () => Promise.reject(new Error('not started'));

  private onResponse(id: string, payload: Buffer): void {
    const entry = this.ends.get(id);
    if (!entry) return;
    const response = JSON.parse(payload.toString('utf8')) as { message_type?: string; content?: string; error?: { message?: string } | null; end_of_dialog?: boolean };
    entry.responses++;
    if (response.error) {
      entry.bad = true;
      entry.error ||= response.error.message ?? 'error';
    }
    if (response.message_type === 'answer') entry.answer += response.content ?? '';
    if (!response.end_of_dialog) return;
    entry.count++;
    if (entry.count === 1) {
      entry.end = performance.now();
      this.waiting.get(id)?.();
      this.waiting.delete(id);
    }
  }

  /** One conversation: resolves at its first end_of_dialog or after the timeout. */
  private converse(): Promise<void> {
    const id = randomUUID();
    this.ends.set(id, { count: 0, responses: 0, bad: false, error: '', answer: '', start: performance.now(), end: 0 });
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve();
      }, TIMEOUT_S * 1000);
      this.waiting.set(id, () => {
        clearTimeout(timer);
        resolve();
      });
      this.send(id).catch((error: unknown) => {
        this.unsent.set(id, error instanceof Error ? error.message : String(error));
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve();
      });
    });
  }

  async run(inFlight: number, until: () => boolean): Promise<void> {
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (!until()) await this.converse();
      }),
    );
  }

  /** Counts over every conversation asked for; latencies of those that ended once in [from, to]. */
  tally(from: number, to: number): { asked: number; unsent: number; unsentSamples: string[]; ended: number; errors: number; lost: number; lostMidway: number; duplicated: number; samples: string[]; inWindow: number[]; lostIds: string[] } {
    let lostMidway = 0;
    const lostIds: string[] = [];
    const samples = new Set<string>();
    let ended = 0;
    let errors = 0;
    let lost = 0;
    let duplicated = 0;
    const inWindow: number[] = [];
    for (const [id, entry] of this.ends) {
      if (this.unsent.has(id)) continue;
      if (entry.count === 0) {
        lost++;
        if (lostIds.length < 10) lostIds.push(`${id} (${entry.responses} responses)`);
        if (entry.responses > 0) lostMidway++;
      } else if (entry.count > 1) duplicated++;
      else if (entry.bad || entry.answer !== '42') {
        errors++;
        if (samples.size < 3) samples.add((entry.error || `answer "${entry.answer}"`).slice(0, 160));
      }
      else {
        ended++;
        if (entry.end >= from && entry.end <= to) inWindow.push(entry.end - entry.start);
      }
    }
    return { asked: this.ends.size, unsent: this.unsent.size, unsentSamples: [...new Set(this.unsent.values())].slice(0, 3), ended, errors, lost, lostMidway, duplicated, samples: [...samples], inWindow, lostIds };
  }
}

const METRIC_ITERATIONS = 'tg_consumer_request_duration_seconds_count';

async function measure(build: AgentBuild, broker: BenchBroker, kind: BenchTransportKind, replicas: number, logDir: string): Promise<ScaleResult> {
  const transport = await createBenchTransport(kind, broker);
  const workload: Workload = await startWorkload({ transport });
  // The gateway on a connection of its own, as TrustGraph's gateway is a process of its own: on one native
  // client its consumer's socket was read by the same I/O thread as the stand-ins' busy ones.
  const gatewayTransport = await createBenchTransport(kind, broker);
  const { gateway, stop: stopGateway } = await CountingGateway.start(gatewayTransport, workload.topics);
  const agents: AgentProcess[] = [];
  try {
    log(`${kind}, ${replicas} replica(s): starting (load average ${loadAverage()})`);
    await startReplicas(
      replicas,
      { build, broker, transport: kind, concurrency: CONCURRENCY, configQueues: workload.configQueues, logFile: (i) => join(logDir, `agent-${kind}-r${replicas}-${i}.log`) },
      agents,
    );
    const drops = watchBrokerDrops(broker.webServiceUrl, workload.topics);
    let stop = false;
    const running = gateway.run(IN_FLIGHT, () => stop);
    await sleep(WARMUP_S * 1000);
    const before = await Promise.all(agents.map((agent) => agent.metrics([METRIC_ITERATIONS])));
    const meter = new CpuMeter({ broker: broker.pid, generator: process.pid, ...Object.fromEntries(agents.map((agent, i) => [`agent${i}`, agent.pid])) });
    const windowStart = performance.now();
    await sleep(DURATION_S * 1000);
    const windowEnd = performance.now();
    const cpu = meter.stop();
    const after = await Promise.all(agents.map((agent) => agent.metrics([METRIC_ITERATIONS])));
    stop = true;
    await running;
    await sleep(LATE_DUPLICATE_WAIT_MS);
    const counts = gateway.tally(windowStart, windowEnd);
    const dropped = drops.stop();
    if (counts.lost > 0) log(`lost request ids (grep them in the agent logs, --keep-logs): ${counts.lostIds.join(', ')}`);
    if (counts.unsent > 0) log(`${counts.unsent} requests could not be published: ${counts.unsentSamples.join('; ')}`);
    const text = await Promise.all(agents.map(async (agent) => (await agent.get('/metrics')).text));
    const iterationsPerReplica = after.map((a, i) => a[METRIC_ITERATIONS]! - before[i]![METRIC_ITERATIONS]!);
    const iterations = iterationsPerReplica.reduce((a, b) => a + b, 0);
    const agentCpu = agents.reduce((sum, _, i) => sum + (cpu.processes[`agent${i}`] ?? Number.NaN), 0);
    const windowSeconds = (windowEnd - windowStart) / 1000;
    const result: ScaleResult = {
      transport: kind,
      replicas,
      asked: counts.asked,
      unsent: counts.unsent,
      ended: counts.ended,
      errors: counts.errors,
      lost: counts.lost,
      lostMidway: counts.lostMidway,
      duplicated: counts.duplicated,
      errorSamples: counts.samples,
      windowSeconds,
      conversationsPerSecond: counts.inWindow.length / windowSeconds,
      latency: summarize(counts.inWindow),
      iterationsPerReplica,
      agentCpuMsPerIteration: (agentCpu * 1000) / iterations,
      brokerCpuMsPerIteration: ((cpu.processes.broker ?? Number.NaN) * 1000) / iterations,
      cpu,
      nextPublished: text.reduce((sum, t) => sum + metricSum(t, 'tg_agent_next_messages_total', { event: 'published' }), 0),
      nextReceived: text.reduce((sum, t) => sum + metricSum(t, 'tg_agent_next_messages_total', { event: 'received' }), 0),
      brokerDrops: dropped,
    };
    log(`${kind}, ${replicas} replica(s): ${num(result.conversationsPerSecond, 1)} conversations/s; asked ${result.asked}, ended ${result.ended}, lost ${result.lost}, duplicated ${result.duplicated}`);
    return result;
  } finally {
    await Promise.allSettled(agents.map((agent) => agent.stop()));
    await stopGateway();
    await gatewayTransport.close();
    await workload.stop();
    await transport.close();
  }
}

/**
 * A non-persistent topic drops silently, and only the broker counts it (`msgDropRate`, per publisher when a
 * connection has too many publishes pending, per subscription when its consumers have no permits or their
 * connection is not writable). Polls the workload's topics' stats and keeps the highest rates seen, so a lost
 * conversation can be told apart: dropped by the broker, or never answered by the agent.
 */
function watchBrokerDrops(webServiceUrl: string, topics: Record<string, string>): { stop(): Record<string, number> } {
  const highest: Record<string, number> = {};
  const note = (key: string, rate: unknown): void => {
    if (typeof rate === 'number' && rate > 0) highest[key] = Math.max(highest[key] ?? 0, rate);
  };
  const poll = (): void => {
    for (const [name, queue] of Object.entries(topics)) {
      const topic = queueToTopic(queue);
      if (!topic.startsWith('non-persistent://')) continue;
      fetch(`${topicAdminUrl(webServiceUrl, topic)}/stats`, { signal: AbortSignal.timeout(5000) })
        .then(async (response) => (response.ok ? ((await response.json()) as BrokerTopicStats) : undefined))
        .then((stats) => {
          for (const publisher of stats?.publishers ?? []) note(`${name} (publish)`, publisher.msgDropRate);
          for (const [subscription, sub] of Object.entries(stats?.subscriptions ?? {})) note(`${name} (${subscription})`, sub.msgDropRate);
        })
        .catch(() => undefined);
    }
  };
  const timer = setInterval(poll, 2000);
  return {
    stop: () => {
      clearInterval(timer);
      return highest;
    },
  };
}

interface BrokerTopicStats {
  publishers?: { msgDropRate?: unknown }[];
  subscriptions?: Record<string, { msgDropRate?: unknown }>;
}

await withCleanup(async (defer) => {
  const loadAtStart = await waitForLowLoad(MAX_LOAD, 10 * 60_000, log);
  const logDir = mkdtempSync(join(tmpdir(), 'tg-agent-bench-scale-'));
  log(`agent logs in ${logDir}${KEEP_LOGS ? '' : ' (removed at the end; --keep-logs keeps them)'}`);
  if (!KEEP_LOGS) defer(() => rmSync(logDir, { recursive: true, force: true }));
  const build = await buildAgent(log);
  defer(() => build.remove());
  const broker = await startBenchBroker({ log });
  defer(() => broker.stop());
  const kinds = TRANSPORTS_FLAG ?? (await availableTransports());
  const results: ScaleResult[] = [];
  for (const kind of kinds) for (const replicas of REPLICAS) results.push(await measure(build, broker, kind, replicas, logDir));

  console.log(
    header('tg-agent scale-out benchmark', broker, [
      `load average before the run: ${loadAtStart}, at the end: ${loadAverage()}`,
      `replicas share the flow's request subscription; each --concurrency ${CONCURRENCY}; the gateway keeps ${IN_FLIGHT} conversations in flight; ${WARMUP_S} s warm-up, ${DURATION_S} s measured`,
      `${ITERATIONS_PER_CONVERSATION} iterations per conversation; every conversation asked for is counted, its end_of_dialog responses per request id`,
    ]),
  );
  console.log(
    table(
      ['transport', 'replicas', 'conversations/s', 'p50 / p99', 'asked', 'unsent', 'ended once', 'errors', 'lost', 'duplicated', 'iterations per replica', 'agent CPU/iteration (all replicas)', 'broker CPU/iteration', 'CPU agents / broker', 'load generator + stand-ins', 'everything else', 'next published / received'],
      results.map((r) => [
        r.transport,
        String(r.replicas),
        num(r.conversationsPerSecond, 1),
        `${ms(r.latency.p50)} / ${ms(r.latency.p99)}`,
        String(r.asked),
        String(r.unsent),
        String(r.ended),
        String(r.errors),
        `${r.lost} (${r.lostMidway} midway)`,
        String(r.duplicated),
        r.iterationsPerReplica.join(' / '),
        ms(r.agentCpuMsPerIteration, 3),
        ms(r.brokerCpuMsPerIteration, 3),
        `${coreShare(Object.entries(r.cpu.processes).filter(([k]) => k.startsWith('agent')).reduce((s, [, v]) => s + v, 0), r.cpu.wall)} / ${coreShare(r.cpu.processes.broker ?? Number.NaN, r.cpu.wall)}`,
        coreShare(r.cpu.processes.generator ?? Number.NaN, r.cpu.wall),
        coreShare(r.cpu.others, r.cpu.wall),
        `${r.nextPublished} / ${r.nextReceived}`,
      ]),
    ),
  );
  for (const r of results.filter((x) => Object.keys(x.brokerDrops).length > 0)) console.log(`- ${r.transport}, ${r.replicas} replica(s), the broker dropped (msg/s): ${JSON.stringify(r.brokerDrops)}`);
  for (const r of results.filter((x) => x.errorSamples.length > 0)) console.log(`- ${r.transport}, ${r.replicas} replica(s), error samples: ${r.errorSamples.map((e) => JSON.stringify(e)).join(', ')}`);
  writeJson(JSON_OUT, { kind: 'scale-out', results });
});
