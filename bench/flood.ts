/**
 * A flood: N two-iteration conversations published at once, on each transport.
 *
 *   npm run bench:flood                                   5000 conversations, websocket then native
 *   npm run bench:flood -- --conversations 2000 --transports websocket --concurrency 16
 *
 * Takes about 5 min on two transports (plus up to 10 min waiting for the 1-minute load average to
 * drop under --max-load).
 *
 * Needs: a Pulsar broker: Java 17+ and Maven (tools/pulsar-standalone, from Maven Central jars), a
 * Docker engine, or PULSAR_URL.
 *
 * The agent is the real one, compiled from src/ and run as its own process (bench/support/agent-process.ts)
 * with `--transport <kind>`. In this process, on the same kind of transport: TrustGraph's config service (the
 * tests' stand-in), zero-latency prompt and MCP tool stand-ins (bench/support/workload.ts), and a gateway that
 * publishes every request as fast as it can, then counts the end_of_dialog responses per id:
 *
 *  - ended: exactly one end_of_dialog, the expected answer; `errors`: exactly one, an error response (e.g.
 *    "overloaded");
 *  - lost: none, once no response has arrived for `--quiet` seconds (or after `--max` seconds);
 *  - duplicated: more than one.
 *
 * Then, from the agent's /metrics: `next` messages published and received, requests refused as overloaded;
 * from the broker's admin API: the request topic's drop counters as it reports them
 * (`/admin/v2/non-persistent/.../stats`, `msgDropRate` per subscription and publisher).
 *
 * Flags: --conversations 5000  --transports websocket,native  --concurrency 64  --quiet 20  --max 600
 *        --json <file>  --keep-logs
 * The native transport needs the `pulsar-client` binding installed (otherwise that run is reported as skipped).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { queueToTopic, topicAdminUrl } from '../src/bus/topics.js';
import type { Transport } from '../src/bus/transport.js';
import { startBroker, type BrokerHandle } from '../dev/broker.js';
import { AgentProcess } from './support/agent-process.js';
import { buildAgent } from './support/build.js';
import { loadAverage, machineInfo } from './support/proc.js';
import { log, withCleanup, writeJson } from './support/run.js';
import { numberFlag, sleep, table } from './support/stats.js';
import { REQUEST_BODY, startWorkload } from './support/workload.js';
import { benchFlags, commonOptions, metricSum } from './support/options.js';
import { createBenchTransport, type BenchTransportKind } from './support/transport.js';

const flags = benchFlags(import.meta.url);
const CONVERSATIONS = numberFlag(flags, 'conversations', 5000);
const COMMON = commonOptions(flags, { durationSeconds: 0, warmupSeconds: 0 });
const TRANSPORTS: BenchTransportKind[] = COMMON.transports ?? ['websocket', 'native'];
const CONCURRENCY = numberFlag(flags, 'concurrency', 64);
const QUIET_S = numberFlag(flags, 'quiet', 20);
const MAX_S = numberFlag(flags, 'max', 600);
const JSON_OUT = COMMON.jsonOut;
const KEEP_LOGS = COMMON.keepLogs;
const PUBLISH_WINDOW = 500;

interface FloodResult {
  transport: string;
  conversations: number;
  publishSeconds: number;
  ended: number;
  errors: number;
  lost: number;
  duplicated: number;
  errorSamples: string[];
  endSeconds: number;
  nextPublished: number;
  nextReceived: number;
  overloadRefusals: number;
  brokerDrops: Record<string, number>;
  skipped?: string;
}

/** The broker's drop counters on the flow's request topic (rates as the broker reports them, per second). */
async function brokerDrops(broker: BrokerHandle, topic: string): Promise<Record<string, number>> {
  const url = `${topicAdminUrl(broker.webServiceUrl, topic)}/stats`;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    if (!response.ok) return { [`HTTP ${response.status}`]: -1 };
    const stats = (await response.json()) as {
      msgDropRate?: number;
      subscriptions?: Record<string, { msgDropRate?: number }>;
      publishers?: { msgDropRate?: number; producerName?: string }[];
    };
    const drops: Record<string, number> = { topic: stats.msgDropRate ?? 0 };
    for (const [name, sub] of Object.entries(stats.subscriptions ?? {})) drops[`subscription ${name}`] = sub.msgDropRate ?? 0;
    for (const publisher of stats.publishers ?? []) drops[`publisher ${publisher.producerName ?? '?'}`] = publisher.msgDropRate ?? 0;
    return drops;
  } catch (error) {
    return { [`stats unavailable: ${error instanceof Error ? error.message : String(error)}`]: -1 };
  }
}

async function floodOnce(kind: BenchTransportKind, broker: BrokerHandle, build: Awaited<ReturnType<typeof buildAgent>>, logDir: string): Promise<FloodResult> {
  let side: Transport;
  try {
    side = await createBenchTransport(kind, broker);
  } catch (error) {
    const skipped = error instanceof Error ? error.message : String(error);
    log(`${kind}: skipped (${skipped})`);
    return { transport: kind, conversations: 0, publishSeconds: 0, ended: 0, errors: 0, lost: 0, duplicated: 0, errorSamples: [], endSeconds: 0, nextPublished: 0, nextReceived: 0, overloadRefusals: 0, brokerDrops: {}, skipped };
  }
  const workload = await startWorkload({ transport: side });
  const agent = await AgentProcess.start({
    build,
    webSocketUrl: broker.webSocketUrl,
    concurrency: CONCURRENCY,
    configQueues: workload.configQueues,
    logFile: join(logDir, `agent-${kind}.log`),
    args: ['--transport', kind, '--pulsar-host', broker.serviceUrl, '--log-level', 'warn'],
  });
  try {
    await agent.waitReady(120_000);
    const requestTopic = queueToTopic(workload.topics.request!);
    const ends = new Map<string, { count: number; error: string | undefined; answer: string }>();
    let lastResponseAt = Date.now();
    const gateway = await side.subscribe({
      topic: queueToTopic(workload.topics.response!),
      subscription: `flood-gateway-${randomUUID().slice(0, 8)}`,
      subscriptionType: 'Exclusive',
      handler: async (message) => {
        await message.ack();
        lastResponseAt = Date.now();
        const id = message.properties.id ?? '';
        const entry = ends.get(id);
        if (!entry) return;
        const response = JSON.parse(message.payload.toString('utf8')) as {
          message_type?: string;
          content?: string;
          end_of_dialog?: boolean;
          error?: { message?: string } | null;
        };
        if (response.message_type === 'answer') entry.answer += response.content ?? '';
        if (!response.end_of_dialog) return;
        entry.count += 1;
        if (response.error) entry.error = response.error.message ?? 'error';
      },
    });
    const producer = await side.createProducer(requestTopic);
    const ids = Array.from({ length: CONVERSATIONS }, () => randomUUID());
    for (const id of ids) ends.set(id, { count: 0, error: undefined, answer: '' });
    log(`${kind}: publishing ${CONVERSATIONS} conversations at once (agent --concurrency ${CONCURRENCY}) ...`);
    const started = performance.now();
    // At most PUBLISH_WINDOW sends outstanding: the native producer refuses more than 1000 (ProducerQueueIsFull).
    let nextIndex = 0;
    await Promise.all(
      Array.from({ length: PUBLISH_WINDOW }, async () => {
        while (nextIndex < ids.length) {
          const id = ids[nextIndex++]!;
          await producer.send({ payload: REQUEST_BODY, properties: { id } });
        }
      }),
    );
    const publishSeconds = (performance.now() - started) / 1000;
    log(`${kind}: published in ${publishSeconds.toFixed(2)} s; waiting for the ends (quiet ${QUIET_S} s) ...`);
    lastResponseAt = Date.now();
    const deadline = Date.now() + MAX_S * 1000;
    const open = (): number => ids.filter((id) => (ends.get(id)?.count ?? 0) === 0).length;
    while (open() > 0 && Date.now() - lastResponseAt < QUIET_S * 1000 && Date.now() < deadline) await sleep(250);
    const endSeconds = (performance.now() - started) / 1000;
    // Late duplicates: a moment more.
    await sleep(2000);
    let ended = 0;
    let errors = 0;
    let lost = 0;
    let duplicated = 0;
    const errorSamples = new Set<string>();
    for (const id of ids) {
      const entry = ends.get(id)!;
      if (entry.count === 0) lost++;
      else if (entry.count > 1) duplicated++;
      else if (entry.error !== undefined || entry.answer !== '42') {
        errors++;
        if (errorSamples.size < 3) errorSamples.add((entry.error ?? `answer "${entry.answer}"`).slice(0, 160));
      } else ended++;
    }
    const metrics = (await agent.get('/metrics')).text;
    const drops = await brokerDrops(broker, requestTopic);
    await gateway.close({ unsubscribe: true }).catch(() => undefined);
    await producer.close().catch(() => undefined);
    const result: FloodResult = {
      transport: kind,
      conversations: CONVERSATIONS,
      publishSeconds,
      ended,
      errors,
      lost,
      duplicated,
      errorSamples: [...errorSamples],
      endSeconds,
      nextPublished: metricSum(metrics, 'tg_agent_next_messages_total', { event: 'published' }),
      nextReceived: metricSum(metrics, 'tg_agent_next_messages_total', { event: 'received' }),
      overloadRefusals: metricSum(metrics, 'tg_agent_overload_refusals_total'),
      brokerDrops: drops,
    };
    log(`${kind}: ${JSON.stringify(result)}`);
    return result;
  } finally {
    await agent.stop().catch(() => undefined);
    await workload.stop().catch(() => undefined);
    await side.close().catch(() => undefined);
  }
}

await withCleanup(async (defer) => {
  const logDir = mkdtempSync(join(tmpdir(), 'tg-agent-flood-'));
  if (!KEEP_LOGS) defer(() => rmSync(logDir, { recursive: true, force: true }));
  else log(`agent logs in ${logDir}`);
  const build = await buildAgent(log);
  defer(() => build.remove());
  log('starting the broker ...');
  const broker = await startBroker();
  defer(() => broker.stop());
  const results: FloodResult[] = [];
  for (const kind of TRANSPORTS) results.push(await floodOnce(kind, broker, build, logDir));

  const m = machineInfo();
  const lines = [
    `## Flood: ${CONVERSATIONS} two-iteration conversations published at once, agent --concurrency ${CONCURRENCY}`,
    '',
    `- machine: ${m.cpus} CPUs (${m.cpuModel}), ${m.memory} RAM; Node ${m.node}; load average at the end: ${loadAverage()}`,
    `- broker: ${broker.source}; gateway, config and model/tool stand-ins on the same transport as the agent`,
    '',
    table(
      ['transport', 'published in', 'ended', 'error responses', 'lost', 'duplicated', 'last end after', 'next published / received', 'overload refusals'],
      results.map((r) =>
        r.skipped
          ? [r.transport, `skipped: ${r.skipped.slice(0, 80)}`, '', '', '', '', '', '', '']
          : [
              r.transport,
              `${r.publishSeconds.toFixed(2)} s`,
              String(r.ended),
              String(r.errors),
              String(r.lost),
              String(r.duplicated),
              `${r.endSeconds.toFixed(1)} s`,
              `${r.nextPublished} / ${r.nextReceived}`,
              String(r.overloadRefusals),
            ],
      ),
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
    '',
    ...results
      .filter((r) => !r.skipped)
      .flatMap((r) => [
        `- ${r.transport}: broker drop rates on the request topic (msg/s, at its last stats update): ${JSON.stringify(r.brokerDrops)}` +
          (r.errorSamples.length ? `; error samples: ${r.errorSamples.map((e) => JSON.stringify(e)).join(', ')}` : ''),
      ]),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  writeJson(JSON_OUT, results);
});
