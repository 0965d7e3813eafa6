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
 *  - duplicated: more than one final message, of a conversation the agents' audit lines show ending more than once
 *    (it ran twice); `final resent` apart: more than one final message of a conversation that ended once (its
 *    final message's publish lost its acknowledgement with the broker connection and was sent again: the response
 *    topic is at least once during a broker fault, and TrustGraph's gateway stops at the first `end_of_dialog`);
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
 * (a clean stop), topic-unload (each topic a conversation crosses unloaded through the admin API, 1 s apart:
 * its clients are disconnected and look it up again, as when a load manager moves it; Pulsar only),
 * namespace-unload (the same for the namespaces of those topics, every bundle at once), tool-silent-20s (the MCP tool stand-in answers nothing for 20 s), tool-drop-every-5th (it
 * leaves out every fifth reply for 20 s), burst-1000 (1000 conversations at once beside the others), agent-kill
 * (SIGKILL one replica, its peer runs on), agent-stop-30s (SIGSTOP one replica for 30 s).
 *
 * `--transports kafka,rabbitmq` runs the same on TrustGraph's Kafka and RabbitMQ backends, each on a node of its own
 * (dev/kafka-broker.ts, dev/rabbitmq-broker.ts) whose data survives its restarts, as a broker's volume does.
 *
 * `--stand-ins python` serves the prompt, MCP tool and librarian queues with TrustGraph's own Python client
 * (dev/python-stand-ins.ts) instead of the lean JavaScript stand-ins; the tool faults leave out its replies.
 *
 * `--cluster` runs the faults of a real cluster instead, one per backend of the chosen transports: Pulsar (ZooKeeper,
 * BookKeeper, two brokers, the WebSocket service), Kafka (three KRaft nodes), RabbitMQ (three nodes); its faults
 * (a node killed, a rolling restart, bundle unloads) are listed in bench/support/cluster-faults.ts. A conversation
 * lost where the backend's design loses what is in flight (a non-persistent topic moving) is counted apart, with
 * the reason.
 *
 * Flags: --faults <list>  --transports websocket,native,kafka,rabbitmq  --cluster  --in-flight 16  --after 20 (s)
 *        --timeout 60 (s)  --stand-ins js|python  --max-load 1.5  --json <file>  --keep-logs
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { startRestartableBroker, type RestartableBroker } from '../dev/restartable-broker.js';
import { startReplicas, type AgentProcess } from './support/agent-process.js';
import { isBackendKind, startBackendNodes } from './support/backend-nodes.js';
import { buildAgent, type AgentBuild } from './support/build.js';
import { FaultGateway } from './support/fault-gateway.js';
import { tally, type FaultResult } from './support/fault-tally.js';
import { clusterBackend, startCluster } from './support/cluster-faults.js';
import { loadAverage, waitForLowLoad } from './support/proc.js';
import { header, log, withCleanup, writeJson } from './support/run.js';
import { benchFlags, commonOptions } from './support/options.js';
import { ms, numberFlag, sleep, table } from './support/stats.js';
import { availableTransports, createBenchTransport, type BenchBrokerAddress, type BenchTransportKind } from './support/transport.js';
import { startWorkload, type Workload } from './support/workload.js';
import { pythonBrokerUrl } from '../dev/python-stand-ins.js';
import { unloadNamespace, unloadTopic } from '../dev/pulsar-unload.js';
import { queueToTopic, splitPulsarTopic } from '../src/bus/index.js';

const flags = benchFlags(import.meta.url);
const { transports: TRANSPORTS_FLAG, maxLoad: MAX_LOAD, jsonOut: JSON_OUT, keepLogs: KEEP_LOGS } = commonOptions(flags, { durationSeconds: 0, warmupSeconds: 0 });
const IN_FLIGHT = numberFlag(flags, 'in-flight', 16);
const CLUSTER = flags.has('cluster');
const AFTER_S = numberFlag(flags, 'after', 20);
const TIMEOUT_S = numberFlag(flags, 'timeout', 60);
const BEFORE_FAULT_MS = 5000;
const LATE_DUPLICATE_WAIT_MS = 3000;
const REPLICAS = 2;
const AGENT_ARGS = ['--service-timeouts', 'mcp-tool=10,prompt=10'];
const PYTHON_STAND_INS = flags.get('stand-ins') === 'python';
if (!PYTHON_STAND_INS && (flags.get('stand-ins') ?? 'js') !== 'js') throw new Error(`--stand-ins takes js or python, got ${flags.get('stand-ins')}`);

/** The broker of one transport, as the faults use it; Pulsar's admin API where there is one. */
type FaultBroker = BenchBrokerAddress & Pick<RestartableBroker, 'crash' | 'stop' | 'start'> & { webServiceUrl?: string };

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
  /** Only on Pulsar's transports (its admin API moves topics). */
  readonly pulsarOnly?: boolean;
  /** Why this fault may lose what is in flight by the backend's design: those lost are counted apart. */
  readonly lossReason?: string;
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

/** The topics a conversation crosses: the agent's request and response, the prompt's and the MCP tool's. */
const CONVERSATION_QUEUES = ['request', 'response', 'prompt-request', 'prompt-response', 'mcp-tool-request', 'mcp-tool-response'];
const UNLOAD_GAP_MS = 1000;
const TOPIC_MOVED = 'in flight while a non-persistent topic was unloaded: the broker drops what is published while its subscription is away';

/** Each of the conversation's topics unloaded in turn, 1 s apart, as a load manager moving them one by one. */
const topicUnload: Fault = {
  name: 'topic-unload',
  pulsarOnly: true,
  lossReason: TOPIC_MOVED,
  async apply({ broker, workload }) {
    for (const queue of CONVERSATION_QUEUES) {
      await unloadTopic(adminUrlOf(broker), queueToTopic(workload.topics[queue]!));
      await sleep(UNLOAD_GAP_MS);
    }
  },
};

/** The namespaces of those topics (`tg/request`, `tg/response`) unloaded whole, 1 s apart: every bundle at once. */
const namespaceUnload: Fault = {
  name: 'namespace-unload',
  pulsarOnly: true,
  lossReason: TOPIC_MOVED,
  async apply({ broker, workload }) {
    const namespaces = new Set(CONVERSATION_QUEUES.map((queue) => {
      const { tenant, namespace } = splitPulsarTopic(queueToTopic(workload.topics[queue]!));
      return `${tenant}/${namespace}`;
    }));
    for (const namespace of namespaces) {
      await unloadNamespace(adminUrlOf(broker), namespace);
      await sleep(UNLOAD_GAP_MS);
    }
  },
};

function adminUrlOf(broker: FaultBroker): string {
  if (!broker.webServiceUrl) throw new Error('this fault needs the Pulsar broker\'s admin API');
  return broker.webServiceUrl;
}

const FAULTS: readonly Fault[] = [
  brokerOutage('broker-kill-5s', 5000, 'crash'),
  brokerOutage('broker-kill-30s', 30_000, 'crash'),
  brokerOutage('broker-kill-120s', 120_000, 'crash'),
  brokerOutage('broker-stop-5s', 5000, 'stop'),
  topicUnload,
  namespaceUnload,
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

async function runFault(build: AgentBuild, broker: FaultBroker, kind: BenchTransportKind, fault: Fault, logDir: string, agentArgs: readonly string[] = []): Promise<FaultResult> {
  // The gateway's and the stand-ins' transport logs beside the agents' (reconnects, the socket heal).
  const transport = await createBenchTransport(kind, broker, pino({ level: 'info' }, pino.destination({ dest: join(logDir, `${fault.name}-${kind}-gateway.log`), sync: true })));
  const backend = kind === 'kafka' || kind === 'rabbitmq' ? kind : 'pulsar';
  const workload = await startWorkload({ transport, ...(PYTHON_STAND_INS ? { pythonBrokerUrl: pythonBrokerUrl(broker, backend) } : {}) });
  const gateway = await FaultGateway.start(transport, workload.topics);
  const agents: AgentProcess[] = [];
  try {
    await startReplicas(
      REPLICAS,
      { build, broker, transport: kind, concurrency: 64, configQueues: workload.configQueues, logFile: (i) => join(logDir, `${fault.name}-${kind}-${i}.log`), args: [...AGENT_ARGS, ...agentArgs] },
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
    const result = tally(fault.name, kind, gateway.all(), { faultStart, faultEnd, heldUntil }, agents.map((a) => a.logFile), fault.lossReason);
    log(
      `${kind}: ${fault.name}: started ${result.started}, answered ${result.answered}, errors ${result.errors}, lost ${JSON.stringify(result.lost)} (agent ended, held by the broker: ${result.agentEndedHeldByBroker}), ` +
        `duplicated ${result.duplicated}, final resent ${result.finalResent}, unsent ${result.unsent}${result.lostByDesign > 0 ? `, lost by design ${result.lostByDesign}` : ''}` +
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

/** The run's table, with where it ran. */
function report(results: readonly FaultResult[], loadAtStart: string, where: string): void {
  console.log(
    header('tg-agent fault benchmark', undefined, [
      `load average before the run: ${loadAtStart}, at the end: ${loadAverage()}`,
      `${where}; ${REPLICAS} agent replicas (${AGENT_ARGS.join(' ')}); the gateway keeps ${IN_FLIGHT} conversations in flight, each waiting at most ${TIMEOUT_S} s; the fault 5 s in, ${AFTER_S} s more after its end by a fresh set of workers`,
      'times from the fault\'s end; "lost" split as agent ended (of those, how many the broker held when it went away: audited before it was back) / midway / never seen by an agent (see bench/faults.ts)',
    ]),
  );
  console.log(
    table(
      ['fault', 'transport', 'fault took', 'started', 'answered', 'errors', 'lost (agent ended / midway / never seen)', 'of those, by design', 'duplicated', 'final resent', 'unsent', 'in flight: longest to final', 'in flight: over 30 s', 'fresh answered after'],
      results.map((r) => [
        r.fault,
        r.transport,
        `${r.faultSeconds.toFixed(1)} s`,
        String(r.started),
        String(r.answered),
        String(r.errors),
        `${r.lost.agentEnded}${r.agentEndedHeldByBroker > 0 ? ` (${r.agentEndedHeldByBroker} ${FAULTS.find((f) => f.name === r.fault)?.brokerAway ? 'held by the broker' : 'before the fault'})` : ''} / ${r.lost.midway} / ${r.lost.neverSeen}`,
        String(r.lostByDesign),
        String(r.duplicated),
        String(r.finalResent),
        String(r.unsent),
        ms(r.longestAfterFaultMs),
        String(r.over30s),
        Number.isNaN(r.freshAnsweredAfterMs) ? 'none' : ms(r.freshAnsweredAfterMs),
      ]),
    ),
  );
  for (const reason of new Set(results.filter((r) => r.lostByDesign > 0).map((r) => r.lossReason))) console.log(`- by design: ${reason} (${results.filter((r) => r.lossReason === reason && r.lostByDesign > 0).map((r) => `${r.fault}, ${r.transport}`).join('; ')})`);
  for (const r of results.filter((x) => x.errorSamples.length > 0)) console.log(`- ${r.fault}, ${r.transport}, error samples: ${r.errorSamples.map((e) => JSON.stringify(e)).join(', ')}`);
  writeJson(JSON_OUT, { kind: 'faults', results });
}

/**
 * --cluster: per backend of the chosen transports, one cluster (started once), each of its faults on each of its
 * transports, every node started again after each.
 */
async function runClusterFaults(build: AgentBuild, kinds: readonly BenchTransportKind[], logDir: string): Promise<FaultResult[]> {
  const results: FaultResult[] = [];
  const chosen = flags.get('faults')?.split(',').filter(Boolean);
  for (const backend of [...new Set(kinds.map(clusterBackend))]) {
    log(`starting a ${backend} cluster ...`);
    const running = await startCluster(backend);
    log(running.cluster.description);
    try {
      const notHere = (): Promise<void> => Promise.reject(new Error('a cluster fault stops its own nodes'));
      const broker: FaultBroker = { ...running.address, crash: notHere, stop: notHere, start: notHere };
      for (const fault of running.faults.filter((f) => !chosen || chosen.includes(f.name))) {
        for (const kind of kinds.filter((k) => clusterBackend(k) === backend)) {
          const run: Fault = { name: fault.name, ...(fault.lossReason ? { lossReason: fault.lossReason } : {}), apply: ({ workload }) => fault.apply(workload) };
          results.push(await runFault(build, broker, kind, run, logDir, running.agentArgs));
          await running.restore();
        }
      }
    } finally {
      await running.cluster.stop();
    }
  }
  return results;
}

async function startFaultPulsar(defer: (cleanup: () => Promise<void>) => void): Promise<RestartableBroker> {
  log('starting a dedicated Pulsar broker ...');
  const pulsar = await startRestartableBroker();
  defer(() => pulsar.close());
  return pulsar;
}

await withCleanup(async (defer) => {
  const loadAtStart = await waitForLowLoad(MAX_LOAD, 10 * 60_000, log);
  const logDir = mkdtempSync(join(tmpdir(), 'tg-agent-bench-faults-'));
  log(`agent logs in ${logDir}${KEEP_LOGS ? '' : ' (removed at the end; --keep-logs keeps them)'}`);
  if (!KEEP_LOGS) defer(() => rmSync(logDir, { recursive: true, force: true }));
  const build = await buildAgent(log);
  defer(() => build.remove());
  const kinds = TRANSPORTS_FLAG ?? (await availableTransports());
  if (CLUSTER) {
    const results = await runClusterFaults(build, kinds, logDir);
    report(results, loadAtStart, 'a real cluster per backend on this machine (bench/support/cluster-faults.ts), started once and every node started again after each fault');
    return;
  }
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
  for (const fault of faults) {
    for (const kind of kinds) if (!(fault.pulsarOnly && isBackendKind(kind))) results.push(await runFault(build, brokerOf(kind), kind, fault, logDir));
  }

  report(results, loadAtStart, 'a dedicated Pulsar standalone, fresh metadata at every start (Kafka: one KRaft node, RabbitMQ: one node, each with its data kept across a restart)');
  writeJson(JSON_OUT, { kind: 'faults', results });
});
