/**
 * Faults: what each broker, service and replica fault does to the conversations in flight, on each transport.
 *
 *   npm run bench:faults                                     every fault, websocket then native
 *   npm run bench:faults -- --faults broker-kill-5s,agent-kill --transports native
 *
 * Takes about 30 min for every fault on two transports (plus up to 10 min waiting for the 1-minute
 * load average to drop under --max-load).
 *
 * Needs: a Pulsar broker: Java 17+ and Maven (tools/pulsar-standalone, from Maven Central jars), a
 * Docker engine, or PULSAR_URL; Java and Debian's rabbitmq-server for --transports kafka,rabbitmq.
 *
 * The broker is a dedicated Pulsar standalone (dev/restartable-broker.ts) that the faults kill and start again on
 * the same ports; every start has fresh metadata (the launcher's data dir is new, the tenant and namespaces are
 * created again), as a standalone broker without a volume restarts. Per fault and transport: two agent replicas
 * (real processes, `--service-timeouts mcp-tool=10,prompt=10`) share the flow, the gateway keeps `--in-flight`
 * conversations going (bench/support/fault-gateway.ts), the fault is applied 5 s in, and the gateway goes on
 * asking for `--after` s after the fault's end, with a fresh set of `--in-flight` workers: those of before the
 * fault finish their last conversation and stop. Each conversation waits at most `--timeout` s for its final
 * message. Then every conversation is counted:
 *
 *  - answered: one final message with the answer; error: one final message with an error;
 *  - duplicated: more than one final message;
 *  - lost: none, told apart from the agents' audit lines: `agent ended` (an agent sent its final message, which
 *    never reached the gateway: the gateway's subscription was away or the broker dropped it; "held by the
 *    broker" counts those whose last iteration was audited before the broker was back, for other faults
 *    before the fault began: the broker had acknowledged the final message and went away holding it, which no
 *    client can tell from a delivered one), `midway` (an
 *    agent ran an iteration, and the conversation stopped after it), `never seen` (no agent ran it: the request
 *    was dropped before any agent saw it, or died inside a killed replica);
 *  - unsent: the gateway's own publish failed (the request never reached the broker).
 *
 * And timed from the fault's end (the broker answering again, the stand-in answering again, the signal sent):
 * the longest wait of a conversation started before it for its final message, and how soon a conversation
 * started after it was answered.
 *
 * Faults: broker-kill-5s, broker-kill-30s, broker-kill-120s (SIGKILL, a pause, a fresh start), broker-stop-5s
 * (a clean stop), tool-silent-20s (the MCP tool stand-in answers nothing for 20 s), tool-drop-every-5th (it
 * leaves out every fifth reply for 20 s), burst-1000 (1000 conversations at once beside the others), agent-kill
 * (SIGKILL one replica, its peer runs on), agent-stop-30s (SIGSTOP one replica for 30 s).
 *
 * `--transports kafka,rabbitmq` runs the same on TrustGraph's Kafka and RabbitMQ backends, each on a node of its own
 * (dev/kafka-broker.ts, dev/rabbitmq-broker.ts) whose data survives its restarts, as a broker's volume does.
 *
 * `--stand-ins python` serves the prompt, MCP tool and librarian queues with TrustGraph's own Python client
 * (dev/python-stand-ins.ts) instead of the lean JavaScript stand-ins; the tool faults leave out its replies.
 *
 * Flags: --faults <list>  --transports websocket,native,kafka,rabbitmq  --in-flight 16  --after 20 (s)  --timeout 60 (s)
 *        --stand-ins js|python  --max-load 1.5  --json <file>  --keep-logs
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRestartableBroker, type RestartableBroker } from '../dev/restartable-broker.js';
import { startReplicas, type AgentProcess } from './support/agent-process.js';
import { isBackendKind, startBackendNodes } from './support/backend-nodes.js';
import { buildAgent, type AgentBuild } from './support/build.js';
import { FaultGateway, type Conversation } from './support/fault-gateway.js';
import { loadAverage, waitForLowLoad } from './support/proc.js';
import { header, log, withCleanup, writeJson } from './support/run.js';
import { benchFlags, commonOptions } from './support/options.js';
import { ms, numberFlag, sleep, table } from './support/stats.js';
import { availableTransports, createBenchTransport, type BenchBrokerAddress, type BenchTransportKind } from './support/transport.js';
import { startWorkload, type Workload } from './support/workload.js';
import { pythonBrokerUrl } from '../dev/python-stand-ins.js';

const flags = benchFlags(import.meta.url);
const { transports: TRANSPORTS_FLAG, maxLoad: MAX_LOAD, jsonOut: JSON_OUT, keepLogs: KEEP_LOGS } = commonOptions(flags, { durationSeconds: 0, warmupSeconds: 0 });
const IN_FLIGHT = numberFlag(flags, 'in-flight', 16);
const AFTER_S = numberFlag(flags, 'after', 20);
const TIMEOUT_S = numberFlag(flags, 'timeout', 60);
const BEFORE_FAULT_MS = 5000;
const LATE_DUPLICATE_WAIT_MS = 3000;
const REPLICAS = 2;
const AGENT_ARGS = ['--service-timeouts', 'mcp-tool=10,prompt=10'];
const PYTHON_STAND_INS = flags.get('stand-ins') === 'python';
if (!PYTHON_STAND_INS && (flags.get('stand-ins') ?? 'js') !== 'js') throw new Error(`--stand-ins takes js or python, got ${flags.get('stand-ins')}`);

/** The broker of one transport, as the faults use it. */
type FaultBroker = BenchBrokerAddress & Pick<RestartableBroker, 'crash' | 'stop' | 'start'>;

interface FaultContext {
  readonly broker: FaultBroker;
  readonly agents: readonly AgentProcess[];
  readonly workload: Workload;
  readonly gateway: FaultGateway;
}

interface Fault {
  readonly name: string;
  /** The broker is away from its start to its end (a kill or a stop, then a start). */
  readonly brokerAway?: boolean;
  /** Applies the fault; resolves at its end (the broker answering again, the stand-in answering, the signal sent). */
  apply(context: FaultContext): Promise<void>;
}

const brokerOutage = (name: string, pauseMs: number, how: 'crash' | 'stop'): Fault => ({
  name,
  brokerAway: true,
  async apply({ broker }) {
    await (how === 'crash' ? broker.crash() : broker.stop());
    await sleep(pauseMs);
    await broker.start();
  },
});

const toolFault = (name: string, fault: Workload['faults']['tool'], forMs: number): Fault => ({
  name,
  async apply({ workload }) {
    workload.faults.tool = fault;
    await sleep(forMs);
    workload.faults.tool = 'answer';
  },
});

const FAULTS: readonly Fault[] = [
  brokerOutage('broker-kill-5s', 5000, 'crash'),
  brokerOutage('broker-kill-30s', 30_000, 'crash'),
  brokerOutage('broker-kill-120s', 120_000, 'crash'),
  brokerOutage('broker-stop-5s', 5000, 'stop'),
  toolFault('tool-silent-20s', 'silent', 20_000),
  toolFault('tool-drop-every-5th', { dropEvery: 5 }, 20_000),
  {
    name: 'burst-1000',
    // The burst's conversations are counted with the others (as in flight); the fault ends as they are sent.
    apply: async ({ gateway }) => void gateway.burst(1000, TIMEOUT_S * 1000),
  },
  { name: 'agent-kill', apply: async ({ agents }) => agents[1]!.signal('SIGKILL') },
  {
    name: 'agent-stop-30s',
    async apply({ agents }) {
      agents[1]!.signal('SIGSTOP');
      await sleep(30_000);
      agents[1]!.signal('SIGCONT');
    },
  },
];

interface FaultResult {
  fault: string;
  transport: BenchTransportKind;
  /** How long the fault itself took (for a broker outage: from the kill until the broker answered again). */
  faultSeconds: number;
  started: number;
  unsent: number;
  answered: number;
  errors: number;
  duplicated: number;
  lost: { agentEnded: number; midway: number; neverSeen: number };
  /**
   * Of `lost.agentEnded`: the conversations whose last iteration was audited before the broker was back (other
   * faults: before the fault began). The broker had acknowledged their final message and held it when it went
   * away: no publish is acknowledged while it is away, and the audit line follows the acknowledgement.
   */
  agentEndedHeldByBroker: number;
  /** Of the conversations started before the fault's end: the longest wait from the fault's end to a final message. */
  longestAfterFaultMs: number;
  /** Conversations started before the fault's end that got no final message within 30 s of it (lost ones included). */
  over30s: number;
  /** From the fault's end until the first conversation started after it was answered; NaN: none was. */
  freshAnsweredAfterMs: number;
  errorSamples: string[];
  /** The first lost conversations' ids, to look up in the agents' logs (--keep-logs). */
  lostIds: string[];
}

async function runFault(build: AgentBuild, broker: FaultBroker, kind: BenchTransportKind, fault: Fault, logDir: string): Promise<FaultResult> {
  const transport = await createBenchTransport(kind, broker);
  const backend = kind === 'kafka' || kind === 'rabbitmq' ? kind : 'pulsar';
  const workload = await startWorkload({ transport, ...(PYTHON_STAND_INS ? { pythonBrokerUrl: pythonBrokerUrl(broker, backend) } : {}) });
  const gateway = await FaultGateway.start(transport, workload.topics);
  const agents: AgentProcess[] = [];
  try {
    await startReplicas(
      REPLICAS,
      { build, broker, transport: kind, concurrency: 64, configQueues: workload.configQueues, logFile: (i) => join(logDir, `${fault.name}-${kind}-${i}.log`), args: AGENT_ARGS },
      agents,
    );
    // A set of workers until the fault's end, a fresh set after it: a conversation that waits for a lost message
    // holds back only its own worker, as a gateway's users go on asking whatever an earlier request waits for.
    let faultEnded = false;
    let done = false;
    const duringFault = gateway.run(IN_FLIGHT, () => faultEnded, TIMEOUT_S * 1000);
    await sleep(BEFORE_FAULT_MS);
    log(`${kind}: ${fault.name} (load average ${loadAverage()})`);
    const faultStart = performance.now();
    const startedAt = Date.now();
    await fault.apply({ broker, agents, workload, gateway });
    const faultEnd = performance.now();
    // Wall-clock, as the agents' audit lines are. No publish is acknowledged while the broker is away, so a final
    // message audited (after its acknowledgement) before the broker is back was taken by the broker that went away.
    const heldUntil = fault.brokerAway ? Date.now() : startedAt;
    faultEnded = true;
    const afterFault = gateway.run(IN_FLIGHT, () => done, TIMEOUT_S * 1000);
    await sleep(AFTER_S * 1000);
    done = true;
    await Promise.all([duringFault, afterFault]);
    // The burst's and the last conversations may still wait: each ends or has its full timeout.
    const waiting = (): boolean => gateway.all().some((c) => c.unsent === undefined && c.end === undefined && performance.now() - c.start < TIMEOUT_S * 1000);
    while (waiting()) await sleep(500);
    await sleep(LATE_DUPLICATE_WAIT_MS);
    const result = tally(fault.name, kind, gateway.all(), { faultStart, faultEnd, heldUntil }, agents.map((a) => a.logFile));
    log(
      `${kind}: ${fault.name}: started ${result.started}, answered ${result.answered}, errors ${result.errors}, lost ${JSON.stringify(result.lost)} (agent ended, held by the broker: ${result.agentEndedHeldByBroker}), ` +
        `duplicated ${result.duplicated}, unsent ${result.unsent}` +
        (result.lostIds.length > 0 ? `; lost ids ${result.lostIds.join(', ')}` : ''),
    );
    return result;
  } finally {
    for (const agent of agents) agent.signal('SIGCONT');
    await Promise.allSettled(agents.map((agent) => agent.stop()));
    await gateway.stop();
    await workload.stop();
    await transport.close();
  }
}

async function startFaultPulsar(defer: (cleanup: () => Promise<void>) => void): Promise<RestartableBroker> {
  log('starting a dedicated Pulsar broker ...');
  const pulsar = await startRestartableBroker();
  defer(() => pulsar.close());
  return pulsar;
}

/** Every conversation counted once; see the header for the classes. */
function tally(
  fault: string,
  transport: BenchTransportKind,
  conversations: readonly Conversation[],
  window: { faultStart: number; faultEnd: number; heldUntil: number },
  logFiles: readonly string[],
): FaultResult {
  const audits = auditedOutcomes(logFiles);
  const result: FaultResult = {
    fault,
    transport,
    faultSeconds: (window.faultEnd - window.faultStart) / 1000,
    started: 0,
    unsent: 0,
    answered: 0,
    errors: 0,
    duplicated: 0,
    lost: { agentEnded: 0, midway: 0, neverSeen: 0 },
    agentEndedHeldByBroker: 0,
    longestAfterFaultMs: 0,
    over30s: 0,
    freshAnsweredAfterMs: Number.NaN,
    errorSamples: [],
    lostIds: [],
  };
  for (const c of conversations) {
    if (c.unsent !== undefined) {
      result.unsent++;
      continue;
    }
    result.started++;
    const before = c.start < window.faultEnd;
    if (before && (c.end === undefined || c.end - window.faultEnd > 30_000)) result.over30s++;
    if (c.end === undefined) {
      if (result.lostIds.length < 5) result.lostIds.push(c.id);
      const { outcomes, lastAt } = audits.get(c.id) ?? { outcomes: [], lastAt: 0 };
      if (outcomes.some((o) => o === 'answer' || o === 'error' || o === 'refused')) {
        result.lost.agentEnded++;
        if (lastAt <= window.heldUntil) result.agentEndedHeldByBroker++;
      } else if (outcomes.length > 0) result.lost.midway++;
      else result.lost.neverSeen++;
      continue;
    }
    if (before) result.longestAfterFaultMs = Math.max(result.longestAfterFaultMs, c.end - window.faultEnd);
    if (c.finals > 1) result.duplicated++;
    else if (c.error !== undefined || c.answer !== '42') {
      result.errors++;
      const sample = (c.error ?? `answer "${c.answer}"`).slice(0, 140);
      if (result.errorSamples.length < 3 && !result.errorSamples.includes(sample)) result.errorSamples.push(sample);
    } else {
      result.answered++;
      if (!before) result.freshAnsweredAfterMs = Math.min(Number.isNaN(result.freshAnsweredAfterMs) ? Infinity : result.freshAnsweredAfterMs, c.end - window.faultEnd);
    }
  }
  return result;
}

/** request id → the outcomes of its audited iterations and when the last was logged (epoch ms), from the agents' JSON logs. */
function auditedOutcomes(logFiles: readonly string[]): Map<string, { outcomes: string[]; lastAt: number }> {
  const audited = new Map<string, { outcomes: string[]; lastAt: number }>();
  for (const file of logFiles) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      if (!line.includes('"agent-iteration"')) continue;
      try {
        const record = JSON.parse(line) as { request_id?: string; outcome?: string; time?: number };
        if (!record.request_id || !record.outcome) continue;
        const seen = audited.get(record.request_id) ?? { outcomes: [], lastAt: 0 };
        seen.outcomes.push(record.outcome);
        seen.lastAt = Math.max(seen.lastAt, record.time ?? 0);
        audited.set(record.request_id, seen);
      } catch {
        // a line cut by a SIGKILL
      }
    }
  }
  return audited;
}

await withCleanup(async (defer) => {
  const loadAtStart = await waitForLowLoad(MAX_LOAD, 10 * 60_000, log);
  const logDir = mkdtempSync(join(tmpdir(), 'tg-agent-bench-faults-'));
  log(`agent logs in ${logDir}${KEEP_LOGS ? '' : ' (removed at the end; --keep-logs keeps them)'}`);
  if (!KEEP_LOGS) defer(() => rmSync(logDir, { recursive: true, force: true }));
  const build = await buildAgent(log);
  defer(() => build.remove());
  const kinds = TRANSPORTS_FLAG ?? (await availableTransports());
  const pulsar = kinds.some((kind) => !isBackendKind(kind)) ? await startFaultPulsar(defer) : undefined;
  const nodes = await startBackendNodes(kinds, defer, log);
  const brokerOf = (kind: BenchTransportKind): FaultBroker => {
    const node = isBackendKind(kind) ? nodes[kind]! : undefined;
    return node ? { webSocketUrl: '', serviceUrl: '', ...node.address, crash: () => node.crash(), stop: () => node.stop(), start: () => node.start() } : pulsar!;
  };
  const chosen = flags.get('faults')?.split(',').filter(Boolean);
  const unknown = (chosen ?? []).filter((name) => !FAULTS.some((f) => f.name === name));
  if (unknown.length > 0) throw new Error(`unknown fault(s) ${unknown.join(', ')}; known: ${FAULTS.map((f) => f.name).join(', ')}`);
  const faults = chosen ? FAULTS.filter((f) => chosen.includes(f.name)) : FAULTS;
  const results: FaultResult[] = [];
  for (const fault of faults) for (const kind of kinds) results.push(await runFault(build, brokerOf(kind), kind, fault, logDir));

  console.log(
    header('tg-agent fault benchmark', undefined, [
      `load average before the run: ${loadAtStart}, at the end: ${loadAverage()}`,
      `a dedicated Pulsar standalone, fresh metadata at every start (Kafka: one KRaft node, RabbitMQ: one node, each with its data kept across a restart); ${REPLICAS} agent replicas (${AGENT_ARGS.join(' ')}); the gateway keeps ${IN_FLIGHT} conversations in flight, each waiting at most ${TIMEOUT_S} s; the fault 5 s in, ${AFTER_S} s more after its end by a fresh set of workers`,
      'times from the fault\'s end; "lost" split as agent ended (of those, how many the broker held when it went away: audited before it was back) / midway / never seen by an agent (see bench/faults.ts)',
    ]),
  );
  console.log(
    table(
      ['fault', 'transport', 'fault took', 'started', 'answered', 'errors', 'lost (agent ended / midway / never seen)', 'duplicated', 'unsent', 'in flight: longest to final', 'in flight: over 30 s', 'fresh answered after'],
      results.map((r) => [
        r.fault,
        r.transport,
        `${r.faultSeconds.toFixed(1)} s`,
        String(r.started),
        String(r.answered),
        String(r.errors),
        `${r.lost.agentEnded}${r.agentEndedHeldByBroker > 0 ? ` (${r.agentEndedHeldByBroker} ${FAULTS.find((f) => f.name === r.fault)?.brokerAway ? 'held by the broker' : 'before the fault'})` : ''} / ${r.lost.midway} / ${r.lost.neverSeen}`,
        String(r.duplicated),
        String(r.unsent),
        ms(r.longestAfterFaultMs),
        String(r.over30s),
        Number.isNaN(r.freshAnsweredAfterMs) ? 'none' : ms(r.freshAnsweredAfterMs),
      ]),
    ),
  );
  for (const r of results.filter((x) => x.errorSamples.length > 0)) console.log(`- ${r.fault}, ${r.transport}, error samples: ${r.errorSamples.map((e) => JSON.stringify(e)).join(', ')}`);
  writeJson(JSON_OUT, { kind: 'faults', results });
});
