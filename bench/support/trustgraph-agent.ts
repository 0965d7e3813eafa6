/**
 * TrustGraph's own ReAct agent, `agent-manager-react` from trustgraph-flow 2.11.1 (the venv that
 * scripts/trustgraph-venv.sh makes), run against the benchmark's broker and stand-ins, so the same workload
 * can be measured on TrustGraph's agent in the same run.
 *
 * TrustGraph's processors ask for config on TrustGraph's fixed config queues (`request:tg:config`, …), so the
 * workload's entries are served there by a second config stand-in. On Pulsar the agent speaks the binary
 * protocol (`--pulsar-host`); on Kafka and RabbitMQ it takes `--pubsub-backend` and that backend's flags, the
 * same as tg-agent's. It reads its `processor:agent-manager` flow entry (the same one tg-agent reads), and
 * gets `--concurrency c` (its receiver pool then runs c handlers at once).
 */
import { startConfigService, TRUSTGRAPH_CONFIG_QUEUES, type ConfigServiceStandIn } from '../../dev/stand-ins/config-service.js';
import { startTrustGraphProcess, type TrustGraphProcess } from '../../dev/trustgraph-pieces.js';
import type { Transport } from '../../src/bus/transport.js';
import { isBackendKind } from './backend-nodes.js';
import { agentBusArgs, type BenchBrokerAddress, type BenchTransportKind } from './transport.js';
import type { ConversationClient, Workload } from './workload.js';

export const TRUSTGRAPH_AGENT_COMMAND = 'agent-manager-react';

/** The workload's config entries on TrustGraph's own config queues. */
export async function serveTrustGraphConfig(transport: Transport, workload: Workload): Promise<ConfigServiceStandIn> {
  const config = await startConfigService({ transport, queues: { ...TRUSTGRAPH_CONFIG_QUEUES } });
  await config.putMany(workload.workspace, workload.entries);
  return config;
}

export interface TrustGraphAgent {
  readonly pid: number;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Start `agent-manager-react --concurrency c` and wait until it has started the workload's flow and answers
 * a conversation correctly (its tools are loaded).
 */
export async function startTrustGraphAgent(options: {
  kind: BenchTransportKind;
  address: BenchBrokerAddress;
  concurrency: number;
  workload: Workload;
  client: ConversationClient;
  log(message: string): void;
}): Promise<TrustGraphAgent> {
  const process: TrustGraphProcess = await startTrustGraphProcess(TRUSTGRAPH_AGENT_COMMAND, [
    ...(isBackendKind(options.kind) ? agentBusArgs(options.kind, options.address) : ['--pulsar-host', options.address.serviceUrl]),
    '--no-metrics',
    '--no-loki-enabled',
    '--log-level',
    'INFO',
    '--concurrency',
    String(options.concurrency),
  ]);
  try {
    if (process.pid === undefined) throw new Error(`${TRUSTGRAPH_AGENT_COMMAND} did not start:\n${process.output()}`);
    await process.waitForOutput(new RegExp(`Started flow: ${options.workload.workspace}/${options.workload.flow}\\b`), 90_000);
    // Its tools arrive with the config handler; a correct answer says they are in place.
    const deadline = performance.now() + 60_000;
    for (;;) {
      const probe = await options.client.converse();
      if (!probe.failed) break;
      if (performance.now() > deadline) throw new Error(`${TRUSTGRAPH_AGENT_COMMAND} never answered a conversation correctly:\n${process.output().slice(-4000)}`);
      options.log(`${TRUSTGRAPH_AGENT_COMMAND}: probe conversation failed, retrying`);
    }
    return { pid: process.pid, output: () => process.output(), stop: () => process.stop() };
  } catch (error) {
    await process.stop();
    throw error;
  }
}
