/**
 * A Kafka cluster of three KRaft nodes on this machine, from the same Maven Central jars as the single node
 * (dev/kafka-broker.ts): each node is broker and controller, the three controllers form the quorum, and the
 * cluster keeps what a production cluster would: replication factor 3 by default (`default.replication.factor`,
 * the offsets topic too), `min.insync.replicas` 2, no unclean leader election. Each node has its own ports and
 * data directory, kept across its restarts.
 *
 *   const kafka = await startKafkaCluster();   // kafka.bootstrapServers: 127.0.0.1:a,127.0.0.1:b,127.0.0.1:c
 *   await kafka.leaderOf('tg.request.agent.default.default').kill('SIGKILL');
 *   await kafka.untilServing(60_000);          // a leader for every partition on the nodes that run
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import type { BrokerCluster, ClusterNode } from './cluster.js';
import { pollUntil, ProcessClusterNode } from './cluster.js';
import { clusterId, kafkaNode, jarNodesUnavailable, KafkaUnavailableError, kraftProperties } from './kafka-broker.js';
import { freePort } from './ports.js';

const NODES = 3;
/**
 * Three JVMs starting at once on a busy 2-core machine took over two minutes to listen: the bound only catches a
 * node that never comes up.
 */
const READY_TIMEOUT_MS = 360_000;

export interface KafkaCluster extends BrokerCluster {
  /** `127.0.0.1:<port>` of every node, comma-separated, as `--kafka-bootstrap-servers` takes it. */
  readonly bootstrapServers: string;
  readonly nodes: readonly (ClusterNode & { readonly id: number })[];
  /** The node that leads partition 0 of `topic` now. */
  leaderOf(topic: string): Promise<ClusterNode>;
}

export async function startKafkaCluster(): Promise<KafkaCluster> {
  const missing = jarNodesUnavailable();
  if (missing) throw new KafkaUnavailableError(missing);
  const root = mkdtempSync(join(tmpdir(), 'tg-agent-kafka-cluster-'));
  const ids = Array.from({ length: NODES }, (_, i) => i + 1);
  const ports = new Map<number, { port: number; controller: number }>();
  for (const id of ids) ports.set(id, { port: await freePort(), controller: await freePort() });
  const voters = ids.map((id) => `${id}@127.0.0.1:${ports.get(id)!.controller}`).join(',');
  const cluster = clusterId();
  const nodes = ids.map((id) => {
    const dir = join(root, `node-${id}`);
    mkdirSync(dir);
    const { port, controller } = ports.get(id)!;
    const process = kafkaNode(dir, nodeProperties(dir, id, port, controller, voters), port, cluster, READY_TIMEOUT_MS);
    return Object.assign(new ProcessClusterNode(`kafka-${id}`, process), { id });
  });
  const bootstrapServers = ids.map((id) => `127.0.0.1:${ports.get(id)!.port}`).join(',');
  const client = new Kafka({ clientId: 'tg-agent-kafka-cluster', brokers: bootstrapServers.split(','), logLevel: logLevel.NOTHING, retry: { retries: 2 } });
  let admin: Admin | undefined;
  const connected = async (): Promise<Admin> => {
    if (!admin) {
      admin = client.admin();
      await admin.connect().catch((error: unknown) => {
        admin = undefined;
        throw error;
      });
    }
    return admin;
  };
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await admin?.disconnect().catch(() => undefined);
    await Promise.all(nodes.map((node) => node.kill('SIGTERM')));
    rmSync(root, { recursive: true, force: true });
  };

  const handle: KafkaCluster = {
    description: `Kafka cluster of ${NODES} KRaft nodes (Maven Central jars) on ${bootstrapServers}, replication factor 3, min.insync.replicas 2`,
    bootstrapServers,
    nodes,
    async leaderOf(topic) {
      const { topics } = await (await connected()).fetchTopicMetadata({ topics: [topic] });
      const leader = topics[0]?.partitions.find((p) => p.partitionId === 0)?.leader;
      const node = nodes.find((n) => n.id === leader);
      if (!node) throw new Error(`no leader for ${topic} (metadata says ${String(leader)})`);
      return node;
    },
    untilServing: (timeoutMs) => pollUntil(async () => servingVerdict(await connected(), nodes), 'the Kafka cluster to serve again', timeoutMs),
    stop,
  };
  try {
    // The three controllers need each other for a quorum: all start at once.
    await Promise.all(nodes.map((node) => node.start()));
    await handle.untilServing(READY_TIMEOUT_MS);
  } catch (error) {
    await stop();
    throw new KafkaUnavailableError(`the Kafka cluster did not start: ${error instanceof Error ? error.message : String(error)} (logs in ${root}/node-*/kafka.log)`, { cause: error });
  }
  return handle;
}

/**
 * True when every running node is a broker of the cluster and every partition has a leader and a full set of
 * in-sync replicas on the running nodes (what a rolling restart waits for before the next node: no partition
 * under-replicated); else what is missing.
 */
async function servingVerdict(admin: Admin, nodes: readonly (ClusterNode & { id: number })[]): Promise<true | string> {
  const running = new Set(nodes.filter((n) => n.running).map((n) => n.id));
  const { brokers } = await admin.describeCluster();
  const registered = new Set(brokers.map((b) => b.nodeId));
  const absent = [...running].filter((id) => !registered.has(id));
  if (absent.length > 0) return `node(s) ${absent.join(', ')} not registered yet`;
  const { topics } = await admin.fetchTopicMetadata();
  for (const topic of topics) {
    for (const partition of topic.partitions) {
      if (!running.has(partition.leader)) return `${topic.name}[${partition.partitionId}] has no leader on a running node`;
      const missing = partition.replicas.filter((id) => running.has(id) && !partition.isr.includes(id));
      if (missing.length > 0) return `${topic.name}[${partition.partitionId}] has replica(s) ${missing.join(', ')} out of sync`;
    }
  }
  return true;
}

function nodeProperties(dir: string, id: number, port: number, controllerPort: number, voters: string): string {
  return kraftProperties({ dir, id, port, controllerPort, voters, replicas: 3, minInSync: 2 });
}
