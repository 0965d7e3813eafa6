/**
 * A Pulsar cluster on this machine from the Maven Central jars the standalone launcher resolves
 * (tools/pulsar-standalone/pulsar.sh classpath): one ZooKeeper (metadata and configuration store), one bookie, two
 * brokers and the WebSocket service as a process of its own (in front of both brokers, as a cluster runs it: the
 * WebSocket transport then keeps one address whichever broker goes), then TrustGraph's tenant and namespaces.
 * Every process has its own ports and data directory, kept across its restarts.
 *
 * Settings a production cluster would have, and three that differ, for this machine's 2 cores: the ZooKeeper
 * session timeout is 10 s (30 s by default; a killed broker's topics move once its session expires, so this is how
 * long they wait), the load manager does not shed load on its own (only the faults move bundles, so each run
 * sees the moves it asks for), and the bookie keeps one copy (the faults are the brokers').
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorMessage } from '../src/errors/error-text.js';
import { topicAdminUrl } from '../src/bus/topics.js';
import { ensureTgTopology } from './broker.js';
import { NodeProcess } from './child-process.js';
import type { BrokerCluster, ClusterNode } from './cluster.js';
import { pollUntil, ProcessClusterNode } from './cluster.js';
import { freePort } from './ports.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LAUNCHER = join(REPO_ROOT, 'tools', 'pulsar-standalone', 'pulsar.sh');
const LOG_CONFIG = join(REPO_ROOT, 'tools', 'pulsar-standalone', 'log4j2.xml');
const CLUSTER_NAME = 'tg-cluster';
const START_TIMEOUT_MS = 360_000;
const BROKERS = 2;
const JAVA_OPTS = [
  '-XX:+UseG1GC',
  '-Djava.net.preferIPv4Stack=true',
  '-Dio.netty.tryReflectionSetAccessible=true',
  ...['java.base/java.io', 'java.base/java.util.zip', 'java.base/java.nio', 'java.base/jdk.internal.misc', 'java.base/sun.net', 'java.base/java.lang', 'java.base/jdk.internal.platform', 'java.management/sun.management', 'jdk.management/com.sun.management.internal'].flatMap((p) => ['--add-opens', `${p}=ALL-UNNAMED`]),
  `-Dlog4j2.configurationFile=${LOG_CONFIG}`,
];

export interface PulsarCluster extends BrokerCluster {
  /** `pulsar://127.0.0.1:<broker 1>,127.0.0.1:<broker 2>` (native transport; the client looks topics up on either). */
  readonly serviceUrl: string;
  /** The WebSocket service's `ws://127.0.0.1:<port>`. */
  readonly webSocketUrl: string;
  /** The two brokers (the nodes the faults kill or restart). */
  readonly nodes: readonly PulsarBroker[];
  /** Why the last `untilServing` waited, each reason as it changed, stamped with the time since it began. */
  readonly waits: string[];
  /** The topics whose owner `untilServing` checks (the faults' workload adds its own). */
  readonly servedTopics: Set<string>;
  /**
   * Notes the subscriptions of each served topic on which the WebSocket service has a consumer now; the next
   * `untilServing` also waits for it to have a consumer on each again. Resolves with how many consumers it has.
   */
  noteWebSocketConsumers(): Promise<number>;
  /** The admin API of a running broker (`http://127.0.0.1:<web port>`). */
  adminUrl(): string;
  /** The broker that owns `topic` now (it is looked up, and so loaded, if nobody owns it). */
  ownerOf(topic: string): Promise<PulsarBroker>;
  /** The broker id (`127.0.0.1:<web port>`) of the broker that is not the one at `brokerUrl` (`pulsar://…`). */
  otherBroker(brokerUrl: string): string;
}

/** How the WebSocket service's client (Pulsar's Java client) names itself in a topic's stats. */
const WEBSOCKET_SERVICE_CLIENT = 'Pulsar-Java';

/** The part of a topic's admin `stats` that lists its consumers. */
interface TopicConsumers {
  subscriptions?: Record<string, { consumers?: { clientVersion?: string }[] }>;
}

export interface PulsarBroker extends ClusterNode {
  readonly serviceUrl: string;
  readonly webServiceUrl: string;
  /** As the load manager names it: `127.0.0.1:<web port>`. */
  readonly brokerId: string;
}

/** A process of the cluster: `main` with `args` on the launcher's classpath, listening on `port` once up. */
function javaNode(classpath: string, dir: string, heap: string, main: string, args: string[], port: number, what: string): NodeProcess {
  return new NodeProcess(
    () => spawn('java', [`-Xms${heap}`, `-Xmx${heap}`, `-XX:MaxDirectMemorySize=${heap}`, ...JAVA_OPTS, `-Djava.io.tmpdir=${dir}`, '-cp', classpath, main, ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] }),
    port,
    what,
    START_TIMEOUT_MS,
  );
}

function pulsarClasspath(): string {
  const file = execFileSync('bash', [LAUNCHER, 'classpath'], { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim().split('\n').pop()!;
  return readFileSync(file, 'utf8').trim();
}

const properties = (entries: Record<string, string | number | boolean>): string =>
  `${Object.entries(entries)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n')}\n`;

export async function startPulsarCluster(): Promise<PulsarCluster> {
  const classpath = pulsarClasspath();
  const root = mkdtempSync(join(tmpdir(), 'tg-agent-pulsar-cluster-'));
  const ports = { zk: await freePort(), bookie: await freePort(), ws: await freePort(), brokers: [] as { service: number; web: number }[] };
  for (let i = 0; i < BROKERS; i++) ports.brokers.push({ service: await freePort(), web: await freePort() });
  const zk = `127.0.0.1:${ports.zk}`;
  const serviceUrl = `pulsar://${ports.brokers.map((b) => `127.0.0.1:${b.service}`).join(',')}`;
  const dir = (name: string): string => {
    const path = join(root, name);
    mkdirSync(path, { recursive: true });
    return path;
  };

  const zkDir = dir('zookeeper');
  writeFileSync(join(zkDir, 'zoo.cfg'), properties({ tickTime: 2000, dataDir: join(zkDir, 'data'), clientPort: ports.zk, clientPortAddress: '127.0.0.1', 'admin.enableServer': false, maxSessionTimeout: 60_000 }));
  const zookeeper = javaNode(classpath, zkDir, '256m', 'org.apache.zookeeper.server.quorum.QuorumPeerMain', [join(zkDir, 'zoo.cfg')], ports.zk, 'zookeeper');

  const bkDir = dir('bookie');
  writeFileSync(
    join(bkDir, 'bookkeeper.conf'),
    properties({
      bookiePort: ports.bookie,
      advertisedAddress: '127.0.0.1',
      allowLoopback: true,
      metadataServiceUri: `zk+null://${zk}/ledgers`,
      journalDirectories: join(bkDir, 'journal'),
      ledgerDirectories: join(bkDir, 'ledgers'),
      ledgerStorageClass: 'org.apache.bookkeeper.bookie.storage.ldb.DbLedgerStorage',
      dbStorage_writeCacheMaxSizeMb: 32,
      dbStorage_readAheadCacheMaxSizeMb: 32,
      dbStorage_rocksDB_blockCacheSize: 16777216,
      journalSyncData: false,
      nettyMaxFrameSizeBytes: 5253120,
      httpServerEnabled: false,
      diskUsageThreshold: 0.99,
      diskUsageWarnThreshold: 0.99,
    }),
  );
  const bookie = javaNode(classpath, bkDir, '256m', 'org.apache.bookkeeper.server.Main', ['--conf', join(bkDir, 'bookkeeper.conf')], ports.bookie, 'bookie');

  const brokers: PulsarBroker[] = ports.brokers.map((p, i) => {
    const brokerDir = dir(`broker-${i + 1}`);
    writeFileSync(join(brokerDir, 'broker.conf'), brokerConf(zk, p));
    const process = javaNode(classpath, brokerDir, '512m', 'org.apache.pulsar.PulsarBrokerStarter', ['--broker-conf', join(brokerDir, 'broker.conf')], p.web, `broker-${i + 1}`);
    const webServiceUrl = `http://127.0.0.1:${p.web}`;
    const ready = (): Promise<void> =>
      pollUntil(async () => (await fetch(`${webServiceUrl}/admin/v2/brokers/ready`, { signal: AbortSignal.timeout(5000) })).ok, `broker-${i + 1} to be ready`, START_TIMEOUT_MS);
    return Object.assign(new ProcessClusterNode(`broker-${i + 1}`, process, ready), {
      serviceUrl: `pulsar://127.0.0.1:${p.service}`,
      webServiceUrl,
      brokerId: `127.0.0.1:${p.web}`,
    });
  });

  const wsDir = dir('websocket');
  writeFileSync(
    join(wsDir, 'websocket.conf'),
    properties({
      configurationMetadataStoreUrl: `zk:${zk}`,
      metadataStoreSessionTimeoutMillis: 10_000,
      clusterName: CLUSTER_NAME,
      brokerServiceUrl: serviceUrl,
      webServicePort: ports.ws,
      bindAddress: '127.0.0.1',
      // The service creates the Pulsar producer or consumer behind each new socket on one of these threads, waiting
      // for the lookup and the broker's answer: with 4, after a broker's loss it brought back the agents' sockets one
      // at a time, about 215 ms each (11 s for 51 of them); with 32, in about 2 s.
      numHttpServerThreads: 32,
      webSocketNumIoThreads: 2,
      webSocketSessionIdleTimeoutMillis: 300_000,
    }),
  );
  const websocket = javaNode(classpath, wsDir, '256m', 'org.apache.pulsar.websocket.service.WebSocketServiceStarter', [join(wsDir, 'websocket.conf')], ports.ws, 'websocket service');

  const running = (): PulsarBroker[] => brokers.filter((b) => b.running);
  const adminUrl = (): string => {
    const broker = running()[0];
    if (!broker) throw new Error('no broker of the Pulsar cluster runs');
    return broker.webServiceUrl;
  };
  const servedTopics = new Set<string>();
  const ownerOf = async (topic: string): Promise<PulsarBroker> => {
    const url = topicAdminUrl(adminUrl(), topic).replace('/admin/v2/', '/lookup/v2/topic/');
    // A first lookup assigns the topic's bundle to a broker, which takes a while on a loaded machine.
    const response = await fetch(url, { signal: AbortSignal.timeout(60_000) });
    if (!response.ok) throw new Error(`lookup of ${topic}: HTTP ${response.status}`);
    const { brokerUrl } = (await response.json()) as { brokerUrl: string };
    const owner = brokers.find((b) => b.serviceUrl === brokerUrl);
    if (!owner) throw new Error(`lookup of ${topic} named ${brokerUrl}, no broker of this cluster`);
    return owner;
  };
  // The WebSocket service's consumers per topic and subscription, as noted before a fault (noteWebSocketConsumers).
  let consumersBefore = new Map<string, Map<string, number>>();
  const waits: string[] = [];
  const webSocketConsumers = async (topic: string): Promise<Map<string, number>> => {
    const response = await fetch(`${topicAdminUrl(adminUrl(), topic)}/stats`, { signal: AbortSignal.timeout(10_000) });
    if (!response.ok) throw new Error(`stats of ${topic}: HTTP ${response.status}`);
    const stats = (await response.json()) as TopicConsumers;
    const counts = new Map<string, number>();
    for (const [name, subscription] of Object.entries(stats.subscriptions ?? {})) {
      counts.set(name, (subscription.consumers ?? []).filter((c) => c.clientVersion?.startsWith(WEBSOCKET_SERVICE_CLIENT)).length);
    }
    return counts;
  };
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await websocket.kill('SIGKILL');
    await Promise.all(brokers.map((b) => b.kill('SIGKILL')));
    await bookie.kill('SIGKILL');
    await zookeeper.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  };
  const handle: PulsarCluster = {
    description: `Pulsar cluster (Maven Central jars): ZooKeeper, a bookie, ${BROKERS} brokers (${serviceUrl}) and the WebSocket service (ws://127.0.0.1:${ports.ws})`,
    serviceUrl,
    webSocketUrl: `ws://127.0.0.1:${ports.ws}`,
    nodes: brokers,
    servedTopics,
    async noteWebSocketConsumers() {
      consumersBefore = new Map();
      for (const topic of servedTopics) consumersBefore.set(topic, await webSocketConsumers(topic));
      return [...consumersBefore.values()].flatMap((counts) => [...counts.values()]).reduce((a, b) => a + b, 0);
    },
    adminUrl,
    ownerOf,
    otherBroker(brokerUrl) {
      const other = brokers.find((b) => b.serviceUrl !== brokerUrl);
      return other!.brokerId;
    },
    waits,
    untilServing: async (timeoutMs) => {
      waits.length = 0;
      const began = Date.now();
      await pollUntil(
        async () => {
          const active = (await (await fetch(`${adminUrl()}/admin/v2/brokers/${CLUSTER_NAME}`, { signal: AbortSignal.timeout(5000) })).json()) as string[];
          const absent = running().filter((b) => !active.includes(b.brokerId));
          if (absent.length > 0) return `${absent.map((b) => b.name).join(', ')} not active yet`;
          for (const topic of servedTopics) {
            const owner = await ownerOf(topic);
            if (!owner.running) return `${topic} is still owned by ${owner.name}, which is down`;
          }
          // The WebSocket service's own client reconnects each consumer of a moved topic with a backoff that grows
          // to a minute (of the 8 consumers of the agents' request subscription, the last was back 2.5 minutes
          // after the kill): until one of a subscription's is back, its sockets are open and what a non-persistent
          // topic carries for it is dropped; once one is, the subscription is served.
          for (const [topic, before] of consumersBefore) {
            const now = await webSocketConsumers(topic);
            for (const [subscription, count] of before) {
              if (count > 0 && !(now.get(subscription) ?? 0)) return `the WebSocket service has none of its ${count} consumers of ${subscription} on ${topic} again`;
            }
          }
          return true;
        },
        'the Pulsar cluster to serve again',
        timeoutMs,
        (reason) => void waits.push(`+${((Date.now() - began) / 1000).toFixed(1)}s ${reason}`),
      ).finally(() => {
        consumersBefore = new Map();
      });
    },
    stop,
  };
  try {
    await zookeeper.start();
    execFileSync(
      'java',
      [
        '-Xmx128m',
        // A tool that runs for seconds: the first JIT tier is enough, and leaves the cores to the nodes starting.
        '-XX:TieredStopAtLevel=1',
        ...JAVA_OPTS,
        '-cp',
        classpath,
        'org.apache.pulsar.PulsarClusterMetadataSetup',
        '--cluster', CLUSTER_NAME,
        '--metadata-store', `zk:${zk}`,
        '--configuration-metadata-store', `zk:${zk}`,
        '--web-service-url', `http://${ports.brokers.map((b) => `127.0.0.1:${b.web}`).join(',')}`,
        '--broker-service-url', serviceUrl,
      ],
      { stdio: 'pipe', timeout: START_TIMEOUT_MS },
    );
    await bookie.start();
    // The WebSocket service reads the cluster's metadata and reaches the brokers only when a client asks: it
    // starts beside them.
    await Promise.all([...brokers.map((b) => b.start()), websocket.start()]);
    await ensureTgTopology(adminUrl());
    await handle.untilServing(START_TIMEOUT_MS);
  } catch (error) {
    await stop();
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().slice(-2000);
    throw new Error(`the Pulsar cluster did not start: ${stderr ?? errorMessage(error)}`, { cause: error });
  }
  return handle;
}

function brokerConf(zk: string, p: { service: number; web: number }): string {
  return properties({
    clusterName: CLUSTER_NAME,
    metadataStoreUrl: `zk:${zk}`,
    configurationMetadataStoreUrl: `zk:${zk}`,
    metadataStoreSessionTimeoutMillis: 10_000,
    brokerServicePort: p.service,
    webServicePort: p.web,
    bindAddress: '127.0.0.1',
    advertisedAddress: '127.0.0.1',
    // The WebSocket service runs on its own (above).
    webSocketServiceEnabled: false,
    managedLedgerDefaultEnsembleSize: 1,
    managedLedgerDefaultWriteQuorum: 1,
    managedLedgerDefaultAckQuorum: 1,
    managedLedgerCacheSizeMB: 32,
    loadBalancerEnabled: true,
    loadBalancerSheddingEnabled: false,
    transactionCoordinatorEnabled: false,
    functionsWorkerEnabled: false,
    allowAutoTopicCreation: true,
    allowAutoTopicCreationType: 'non-partitioned',
    brokerDeleteInactiveTopicsEnabled: false,
    // As tools/pulsar-standalone/standalone.conf says why: TrustGraph sets no topic-level policy.
    topicLevelPoliciesEnabled: false,
    systemTopicEnabled: false,
    numIOThreads: 2,
    numHttpServerThreads: 4,
    bookkeeperClientNumIoThreads: 2,
    brokerShutdownTimeoutMs: 10_000,
  });
}
