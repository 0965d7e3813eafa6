/**
 * bench:faults --cluster: the faults a cluster has every day, on a real cluster of the transport's backend on this
 * machine (dev/kafka-cluster.ts, dev/rabbitmq-cluster.ts, dev/pulsar-cluster.ts). Each fault resolves when the
 * cluster serves again (its end, from which the table times conversations); what it took down is started again
 * after the count, before the next fault (`restore`).
 *
 *  - Kafka: `leader-kill` (SIGKILL the node leading the agents' request topic; it ends once every partition has a
 *    leader on the two others), `rolling-restart` (each node in turn: SIGTERM, start, and on to the next once no
 *    partition is under-replicated, as a rolling upgrade does);
 *  - RabbitMQ: `node-kill` (SIGKILL the node holding the agents' request queue), `rolling-restart`;
 *  - Pulsar (native and websocket): `broker-kill` (SIGKILL the broker owning the agents' request topic: its
 *    topics move to the other), `rolling-restart` (both brokers in turn), `bundle-unload` (every bundle of the
 *    conversation's namespaces unloaded to the other broker, as the load manager moves them).
 */
import type { BrokerCluster, ClusterNode } from '../../dev/cluster.js';
import { startKafkaCluster, type KafkaCluster } from '../../dev/kafka-cluster.js';
import { startPulsarCluster, type PulsarCluster } from '../../dev/pulsar-cluster.js';
import { startRabbitMqCluster, type RabbitMqCluster } from '../../dev/rabbitmq-cluster.js';
import { kafkaTopicFor } from '../../src/bus/kafka/topology.js';
import { exchangeFor } from '../../src/bus/rabbitmq/topology.js';
import { flowSubscriptionName, queueToTopic, splitPulsarTopic } from '../../src/bus/topics.js';
import { namespaceBundles, topicOwner, unloadBundle } from '../../dev/pulsar-unload.js';
import type { BenchBrokerAddress, BenchTransportKind } from './transport.js';
import type { Workload } from './workload.js';

/** How long a cluster may take to serve again after a fault, or to start. */
const SERVING_TIMEOUT_MS = 180_000;
/** The topics a conversation crosses (the agent's, the prompt's, the MCP tool's). */
const CONVERSATION_QUEUES = ['request', 'response', 'prompt-request', 'prompt-response', 'mcp-tool-request', 'mcp-tool-response'];
const REPLY_QUEUE_GONE = "in flight on a connection to the node that went: a reply queue is exclusive and auto-deleted (TrustGraph's declaration), so it lives and dies with its connection's node, and what is published to it meanwhile is dropped";
const MOVED = 'in flight while a non-persistent topic moved between brokers: the broker drops what is published while its subscription is away';

export interface ClusterFault {
  readonly name: string;
  /** Why this fault may lose what is in flight, by the backend's design (counted apart). */
  readonly lossReason?: string;
  /** Applies the fault; resolves once the cluster serves again. */
  apply(workload: Workload): Promise<void>;
}

export interface RunningCluster {
  readonly cluster: BrokerCluster;
  /** Where the benchmark's processes and the agents connect. */
  readonly address: BenchBrokerAddress;
  /** The agents' extra options on this cluster. */
  readonly agentArgs: string[];
  readonly faults: readonly ClusterFault[];
  /** Starts whatever a fault left stopped, and waits until the cluster serves on every node. */
  restore(): Promise<void>;
}

type Backend = 'kafka' | 'rabbitmq' | 'pulsar';

export function clusterBackend(kind: BenchTransportKind): Backend {
  return kind === 'kafka' || kind === 'rabbitmq' ? kind : 'pulsar';
}

export async function startCluster(backend: Backend): Promise<RunningCluster> {
  if (backend === 'kafka') return kafkaFaults(await startKafkaCluster());
  if (backend === 'rabbitmq') return rabbitFaults(await startRabbitMqCluster());
  return pulsarFaults(await startPulsarCluster());
}

/** SIGKILL the node `pick` names; the node stays down until `restore`. */
function nodeKill(name: string, cluster: BrokerCluster, pick: (workload: Workload) => Promise<ClusterNode>, lossReason?: string): ClusterFault {
  return {
    name,
    ...(lossReason ? { lossReason } : {}),
    async apply(workload) {
      const node = await pick(workload);
      await node.kill('SIGKILL');
      await cluster.untilServing(SERVING_TIMEOUT_MS);
    },
  };
}

/** Every node in turn: SIGTERM, start again, and on to the next once the cluster serves on every node. */
function rollingRestart(cluster: BrokerCluster, lossReason?: string): ClusterFault {
  return {
    name: 'rolling-restart',
    ...(lossReason ? { lossReason } : {}),
    async apply() {
      for (const node of cluster.nodes) {
        await node.kill('SIGTERM');
        await node.start();
        await cluster.untilServing(SERVING_TIMEOUT_MS);
      }
    },
  };
}

function restoring(cluster: BrokerCluster): () => Promise<void> {
  return async () => {
    for (const node of cluster.nodes) if (!node.running) await node.start();
    await cluster.untilServing(SERVING_TIMEOUT_MS);
  };
}

function kafkaFaults(kafka: KafkaCluster): RunningCluster {
  const requestTopic = (workload: Workload): string => kafkaTopicFor(queueToTopic(workload.topics.request!)).name;
  return {
    cluster: kafka,
    address: { webSocketUrl: '', serviceUrl: '', kafkaBootstrapServers: kafka.bootstrapServers },
    agentArgs: [],
    faults: [nodeKill('leader-kill', kafka, (workload) => kafka.leaderOf(requestTopic(workload))), rollingRestart(kafka)],
    restore: restoring(kafka),
  };
}

function rabbitFaults(rabbit: RabbitMqCluster): RunningCluster {
  // The agents' request queue: `<exchange>.<subscription>`, as TrustGraph names it (src/bus/rabbitmq/topology.ts).
  const requestQueue = (workload: Workload): string =>
    `${exchangeFor(queueToTopic(workload.topics.request!)).exchange}.${flowSubscriptionName('agent-manager', workload.workspace, workload.flow, 'request')}`;
  return {
    cluster: rabbit,
    address: { webSocketUrl: '', serviceUrl: '', rabbitmqUrl: rabbit.url },
    agentArgs: [],
    faults: [nodeKill('node-kill', rabbit, (workload) => rabbit.nodeHolding(requestQueue(workload)), REPLY_QUEUE_GONE), rollingRestart(rabbit, REPLY_QUEUE_GONE)],
    restore: restoring(rabbit),
  };
}

function pulsarFaults(pulsar: PulsarCluster): RunningCluster {
  const topicsOf = (workload: Workload): string[] => CONVERSATION_QUEUES.map((queue) => queueToTopic(workload.topics[queue]!));
  const bundleUnload: ClusterFault = {
    name: 'bundle-unload',
    lossReason: MOVED,
    async apply(workload) {
      const admin = pulsar.adminUrl();
      const namespaces = new Set(topicsOf(workload).map((topic) => `${splitPulsarTopic(topic).tenant}/${splitPulsarTopic(topic).namespace}`));
      for (const namespace of namespaces) {
        for (const bundle of await namespaceBundles(admin, namespace)) {
          // To the broker that does not own the request topic now, so that it really moves.
          const owner = await topicOwner(admin, queueToTopic(workload.topics.request!));
          await unloadBundle(admin, namespace, bundle, pulsar.otherBroker(owner));
        }
      }
      await pulsar.untilServing(SERVING_TIMEOUT_MS);
    },
  };
  return {
    cluster: pulsar,
    address: { webSocketUrl: pulsar.webSocketUrl, serviceUrl: pulsar.serviceUrl, adminUrl: pulsar.nodes.map((broker) => broker.webServiceUrl).join(',') },
    // Every broker's admin API, asked in turn: the one a broker kill takes away is not the only one asked.
    agentArgs: ['--broker-admin-url', pulsar.nodes.map((broker) => broker.webServiceUrl).join(',')],
    // The cluster serves again once every topic of the conversation has a running owner.
    faults: [nodeKill('broker-kill', pulsar, async (workload) => pulsar.ownerOf(queueToTopic(workload.topics.request!)), MOVED), rollingRestart(pulsar, MOVED), bundleUnload].map((fault) => ({
      ...fault,
      apply: async (workload: Workload) => {
        pulsar.servedTopics.clear();
        for (const topic of topicsOf(workload)) pulsar.servedTopics.add(topic);
        await fault.apply(workload);
      },
    })),
    restore: restoring(pulsar),
  };
}
