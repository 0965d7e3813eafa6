/**
 * Scale-out: 1, 2 and 4 replicas of the agent on one flow, sharing its request subscription (issue #17).
 *
 *   npm run bench:scale-out                                  replicas 1, 2, 4; websocket then native
 *   npm run bench:scale-out -- --replicas 1,2 --transports native --duration 10
 *
 * Each replica is the real agent in its own process (bench/support/agent-process.ts), `--concurrency c`, all on
 * the same broker, config and stand-ins. Every replica subscribes to the flow's request topic under the same
 * Shared subscription, so a request — a first request or a `next` message of a conversation another replica
 * started — goes to any one of them. The gateway keeps `--in-flight` conversations going for the measured
 * window, then stops asking, waits for the last ones and a few seconds more for late duplicates, and counts
 * the `end_of_dialog` responses per request id:
 *
 *  - ended: exactly one, with the expected answer; error: exactly one, an error or a wrong answer;
 *  - lost: none (the conversation timed out, `--timeout` s); duplicated: more than one.
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
import { queueToTopic } from '../src/bus/topics.js';
import type { Transport } from '../src/bus/transport.js';
import { uniqueSuffix } from '../dev/flow-config.js';
import { AgentProcess } from './support/agent-process.js';
import { startBenchBroker, type BenchBroker } from './support/broker.js';
import { buildAgent, type AgentBuild } from './support/build.js';
import { coreShare, CpuMeter, loadAverage, waitForLowLoad, type CpuReading } from './support/proc.js';
import { header, log, withCleanup, writeJson } from './support/run.js';
import { ms, num, numberFlag, parseFlags, sleep, summarize, table, type Summary } from './support/stats.js';
import { availableTransports, createBenchTransport, type BenchTransportKind } from './support/transport.js';
import { ITERATIONS_PER_CONVERSATION, REQUEST_BODY, startWorkload, type Workload } from './support/workload.js';

const flags = parseFlags(process.argv.slice(2));
const REPLICAS = (flags.get('replicas') ?? '1,2,4').split(',').map(Number);
const TRANSPORTS_FLAG = flags.get('transports');
const IN_FLIGHT = numberFlag(flags, 'in-flight', 64);
const CONCURRENCY = numberFlag(flags, 'concurrency', 64);
const DURATION_S = numberFlag(flags, 'duration', 20);
const WARMUP_S = numberFlag(flags, 'warmup', 3);
const TIMEOUT_S = numberFlag(flags, 'timeout', 30);
const MAX_LOAD = numberFlag(flags, 'max-load', 1.5);
const JSON_OUT = flags.get('json');
const KEEP_LOGS = flags.has('keep-logs');
/** After the last conversation: how long to keep listening for a second end_of_dialog. */
const LATE_DUPLICATE_WAIT_MS = 3000;

interface ScaleResult {
  transport: BenchTransportKind;
  replicas: number;
  /** Conversations asked for in the whole run (warm-up included): every one is counted. */
  asked: number;
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
}

/** The gateway: every end_of_dialog is counted per id, also after the conversation has ended. */
class CountingGateway {
  private readonly ends = new Map<string, { count: number; responses: number; bad: boolean; error: string; answer: string; start: number; end: number }>();
  private readonly waiting = new Map<string, () => void>();

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
      this.send(id).catch(() => undefined);
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
  tally(from: number, to: number): { asked: number; ended: number; errors: number; lost: number; lostMidway: number; duplicated: number; samples: string[]; inWindow: number[] } {
    let lostMidway = 0;
    const samples = new Set<string>();
    let ended = 0;
    let errors = 0;
    let lost = 0;
    let duplicated = 0;
    const inWindow: number[] = [];
    for (const entry of this.ends.values()) {
      if (entry.count === 0) {
        lost++;
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
    return { asked: this.ends.size, ended, errors, lost, lostMidway, duplicated, samples: [...samples], inWindow };
  }
}

const METRIC_ITERATIONS = 'tg_consumer_request_duration_seconds_count';

async function measure(build: AgentBuild, broker: BenchBroker, kind: BenchTransportKind, replicas: number, logDir: string): Promise<ScaleResult> {
  const transport = await createBenchTransport(kind, broker);
  const workload: Workload = await startWorkload({ transport });
  const { gateway, stop: stopGateway } = await CountingGateway.start(transport, workload.topics);
  const agents: AgentProcess[] = [];
  try {
    log(`${kind}, ${replicas} replica(s): starting (load average ${loadAverage()})`);
    for (let i = 0; i < replicas; i++) {
      agents.push(
        await AgentProcess.start({
          build,
          webSocketUrl: broker.webSocketUrl,
          transport: kind,
          serviceUrl: broker.serviceUrl,
          concurrency: CONCURRENCY,
          configQueues: workload.configQueues,
          logFile: join(logDir, `agent-${kind}-r${replicas}-${i}.log`),
        }),
      );
    }
    await Promise.all(agents.map((agent) => agent.waitReady()));
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
    const text = await Promise.all(agents.map(async (agent) => (await agent.get('/metrics')).text));
    const iterationsPerReplica = after.map((a, i) => a[METRIC_ITERATIONS]! - before[i]![METRIC_ITERATIONS]!);
    const iterations = iterationsPerReplica.reduce((a, b) => a + b, 0);
    const agentCpu = agents.reduce((sum, _, i) => sum + (cpu.processes[`agent${i}`] ?? Number.NaN), 0);
    const windowSeconds = (windowEnd - windowStart) / 1000;
    const result: ScaleResult = {
      transport: kind,
      replicas,
      asked: counts.asked,
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
      nextPublished: text.reduce((sum, t) => sum + counter(t, 'tg_agent_next_messages_total', 'event="published"'), 0),
      nextReceived: text.reduce((sum, t) => sum + counter(t, 'tg_agent_next_messages_total', 'event="received"'), 0),
    };
    log(`${kind}, ${replicas} replica(s): ${num(result.conversationsPerSecond, 1)} conversations/s; asked ${result.asked}, ended ${result.ended}, lost ${result.lost}, duplicated ${result.duplicated}`);
    return result;
  } finally {
    await Promise.allSettled(agents.map((agent) => agent.stop()));
    await stopGateway();
    await workload.stop();
    await transport.close();
  }
}

/** Sum of a counter's series whose labels include `label`. */
function counter(metrics: string, name: string, label: string): number {
  let total = 0;
  for (const line of metrics.split('\n')) {
    if (!line.startsWith(`${name}{`) || !line.includes(label)) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1)) || 0;
  }
  return total;
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
  const kinds = TRANSPORTS_FLAG ? (TRANSPORTS_FLAG.split(',') as BenchTransportKind[]) : await availableTransports();
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
      ['transport', 'replicas', 'conversations/s', 'p50 / p99', 'asked', 'ended once', 'errors', 'lost', 'duplicated', 'iterations per replica', 'agent CPU/iteration (all replicas)', 'broker CPU/iteration', 'CPU agents / broker', 'load generator + stand-ins', 'everything else', 'next published / received'],
      results.map((r) => [
        r.transport,
        String(r.replicas),
        num(r.conversationsPerSecond, 1),
        `${ms(r.latency.p50)} / ${ms(r.latency.p99)}`,
        String(r.asked),
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
  for (const r of results.filter((x) => x.errorSamples.length > 0)) console.log(`- ${r.transport}, ${r.replicas} replica(s), error samples: ${r.errorSamples.map((e) => JSON.stringify(e)).join(', ')}`);
  writeJson(JSON_OUT, { kind: 'scale-out', results });
});
