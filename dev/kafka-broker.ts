/**
 * A real Apache Kafka broker for integration tests, benchmarks and `npm run local -- --pubsub-backend kafka`.
 *
 * {@link startKafka} takes `KAFKA_BOOTSTRAP_SERVERS` (a running cluster that `stop()` leaves alone) or starts
 * one node in KRaft mode (broker and controller in one JVM) from the Maven Central jars that
 * tools/kafka-kraft/pom.xml names: Maven resolves them once (cached by the pom's hash in ~/.cache/tg-agent),
 * the storage is formatted in a fresh temporary directory, and the node listens on free ports of 127.0.0.1.
 * Its settings are those of a one-node cluster (replication factor 1), with no rebalance delay for a new
 * consumer group, so that tests need not wait three seconds for each.
 *
 * `kill()` and `start()` stop the node and start it again on the same ports and data (the broker faults of
 * `npm run bench:faults`).
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorMessage } from '../src/errors/error-text.js';
import { NodeProcess } from './child-process.js';
import { freePort } from './ports.js';

const TOOL_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'tools', 'kafka-kraft');
const SETTINGS_XML = join(TOOL_DIR, '..', 'pulsar-standalone', 'settings.xml');
const START_TIMEOUT_MS = 120_000;
/** The broker's `message.max.bytes` in the nodes started here: Kafka's default. */
export const TEST_KAFKA_MAX_MESSAGE_BYTES = 1_048_588;

export interface KafkaHandle {
  /** `127.0.0.1:<port>`, as `--kafka-bootstrap-servers` takes it. */
  readonly bootstrapServers: string;
  readonly description: string;
  /** The node's process id while it runs, if this process started it (for its CPU time). */
  readonly pid: number | undefined;
  /** Stops the node (SIGKILL: a crash; SIGTERM: a clean stop) until `start()`; only for a node this process started. */
  kill(signal: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  /** Starts a killed node again on the same ports and data; resolves once it listens. */
  start(): Promise<void>;
  /** Stops the node if this process started it. Safe to call twice. */
  stop(): Promise<void>;
}

export class KafkaUnavailableError extends Error {
  override readonly name = 'KafkaUnavailableError';
}

/** Why no Kafka can be had here (none given with KAFKA_BOOTSTRAP_SERVERS, none can be started), or undefined when one can. */
export function kafkaUnavailable(): string | undefined {
  if (process.env.KAFKA_BOOTSTRAP_SERVERS) return undefined;
  const missing = jarNodesUnavailable();
  return missing && `no KAFKA_BOOTSTRAP_SERVERS and ${missing}`;
}

/**
 * Why no node can be started here from Maven Central jars (Kafka's, a Pulsar cluster's), or undefined when one can.
 * A cluster is always started here: KAFKA_BOOTSTRAP_SERVERS names a running Kafka, not a way to start nodes.
 */
export function jarNodesUnavailable(): string | undefined {
  for (const [tool, args] of [['java', ['-version']], ['mvn', ['-v']]] as const) {
    try {
      execFileSync(tool, [...args], { stdio: 'ignore' });
    } catch {
      return `no ${tool} on PATH (the nodes run from Maven Central jars with Java 17)`;
    }
  }
  return undefined;
}

export async function startKafka(): Promise<KafkaHandle> {
  const given = process.env.KAFKA_BOOTSTRAP_SERVERS?.trim();
  if (given) {
    const notHere = async () => Promise.reject(new KafkaUnavailableError('a cluster given with KAFKA_BOOTSTRAP_SERVERS is not stopped or started here'));
    return { bootstrapServers: given, description: `Kafka at ${given}`, pid: undefined, kill: notHere, start: notHere, stop: async () => undefined };
  }
  const missing = kafkaUnavailable();
  if (missing) throw new KafkaUnavailableError(missing);
  const dir = mkdtempSync(join(tmpdir(), 'tg-agent-kafka-'));
  const [port, controllerPort] = [await freePort(), await freePort()];
  let node: NodeProcess;
  try {
    node = kafkaNode(dir, serverProperties(dir, port, controllerPort), port, clusterId());
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await node.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await node.start();
  } catch (error) {
    await stop();
    throw new KafkaUnavailableError(`${errorMessage(error)} (log: ${join(dir, 'kafka.log')})`, { cause: error });
  }
  return {
    bootstrapServers: `127.0.0.1:${port}`,
    description: `Kafka (KRaft, Maven Central jars) on 127.0.0.1:${port}`,
    get pid() {
      return node.pid;
    },
    kill: (signal) => node.kill(signal),
    start: () => node.start(),
    stop,
  };
}

/**
 * One Kafka node in `dir` (its properties written there, its storage formatted for `cluster`), not started yet:
 * `start()` it. Its log is `dir/kafka.log`.
 */
export function kafkaNode(dir: string, properties: string, port: number, cluster: string, startTimeoutMs = START_TIMEOUT_MS): NodeProcess {
  const classpath = kafkaClasspath();
  writeFileSync(join(dir, 'server.properties'), properties);
  writeFileSync(join(dir, 'log4j2.properties'), log4jProperties(dir));
  const java = (args: string[]) => ['-Xms256m', '-Xmx768m', '-cp', classpath, `-Dlog4j2.configurationFile=${join(dir, 'log4j2.properties')}`, ...args];
  try {
    // `=`: an id may begin with '-', which would read as an option.
    execFileSync('java', java(['kafka.tools.StorageTool', 'format', `--cluster-id=${cluster}`, '-c', join(dir, 'server.properties')]), { stdio: 'pipe' });
  } catch (error) {
    throw new KafkaUnavailableError(`formatting the Kafka storage failed: ${(error as { stderr?: Buffer }).stderr?.toString().slice(-2000) ?? errorMessage(error)}`);
  }
  return new NodeProcess(() => spawn('java', java(['kafka.Kafka', join(dir, 'server.properties')]), { stdio: ['ignore', 'pipe', 'pipe'], detached: true }), port, 'kafka', startTimeoutMs);
}

function serverProperties(dir: string, port: number, controllerPort: number): string {
  return kraftProperties({ dir, id: 1, port, controllerPort, voters: `1@127.0.0.1:${controllerPort}`, replicas: 1, minInSync: 1 });
}

/**
 * A KRaft node's `server.properties`, broker and controller in one: a single node (`replicas` 1) or one of a
 * cluster whose internal topics are kept on `replicas` nodes, `minInSync` of them acknowledging each write.
 */
export function kraftProperties(node: { dir: string; id: number; port: number; controllerPort: number; voters: string; replicas: number; minInSync: number }): string {
  const { dir, id, port, controllerPort, voters, replicas, minInSync } = node;
  const cluster = replicas > 1 ? [`default.replication.factor=${replicas}`, `min.insync.replicas=${minInSync}`, 'unclean.leader.election.enable=false'] : [];
  return [
    'process.roles=broker,controller',
    `node.id=${id}`,
    `controller.quorum.voters=${voters}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    `log.dirs=${join(dir, 'data')}`,
    'num.partitions=1',
    ...cluster,
    `offsets.topic.replication.factor=${replicas}`,
    'offsets.topic.num.partitions=4',
    `transaction.state.log.replication.factor=${replicas}`,
    `transaction.state.log.min.isr=${minInSync}`,
    'group.initial.rebalance.delay.ms=0',
    `message.max.bytes=${TEST_KAFKA_MAX_MESSAGE_BYTES}`,
    '',
  ].join('\n');
}

function log4jProperties(dir: string): string {
  return [
    'rootLogger.level=WARN',
    'rootLogger.appenderRef.file.ref=file',
    'appender.file.type=File',
    'appender.file.name=file',
    `appender.file.fileName=${join(dir, 'kafka.log')}`,
    'appender.file.layout.type=PatternLayout',
    'appender.file.layout.pattern=[%d] %p %m (%c)%n',
    '',
  ].join('\n');
}

/** A Kafka cluster id: 16 random bytes, URL-safe base64 without padding. */
export function clusterId(): string {
  return randomBytes(16).toString('base64url');
}

/** The broker's classpath: resolved by Maven once per version of the pom, then read from the cache. */
function kafkaClasspath(): string {
  const pom = join(TOOL_DIR, 'pom.xml');
  const key = createHash('sha256').update(readFileSync(pom)).update(readFileSync(SETTINGS_XML)).digest('hex').slice(0, 16);
  const cacheDir = join(homedir(), '.cache', 'tg-agent');
  const cached = join(cacheDir, `kafka-classpath-${key}.txt`);
  if (existsSync(cached)) {
    const classpath = readFileSync(cached, 'utf8').trim();
    if (classpath.split(':').every((jar) => existsSync(jar))) return classpath;
  }
  mkdirSync(cacheDir, { recursive: true });
  const plugin = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath';
  try {
    execFileSync('mvn', ['-B', '-q', '-s', SETTINGS_XML, '-f', pom, plugin, `-Dmdep.outputFile=${cached}`], { stdio: 'pipe' });
  } catch (error) {
    const output = (error as { stdout?: Buffer }).stdout?.toString().slice(-2000) ?? errorMessage(error);
    throw new KafkaUnavailableError(`Maven could not resolve the Kafka broker's jars from ${pom}: ${output}`);
  }
  return readFileSync(cached, 'utf8').trim();
}
