/**
 * The Kafka and RabbitMQ nodes of a benchmark run: one of each, started only when the run's transports include
 * that backend (dev/kafka-broker.ts, dev/rabbitmq-broker.ts; `KAFKA_BOOTSTRAP_SERVERS` / `RABBITMQ_URL` use
 * running ones, which then cannot be killed or restarted). Each keeps its data across a restart, as a broker
 * with a volume does.
 */
import { startKafka, type KafkaHandle } from '../../dev/kafka-broker.js';
import { startRabbitMq, type RabbitMqHandle } from '../../dev/rabbitmq-broker.js';
import type { BenchBrokerAddress, BenchTransportKind } from './transport.js';

/** A node the benchmark started: where it listens, its process (for its CPU), and the faults' handles. */
export interface BackendNode {
  readonly address: Pick<BenchBrokerAddress, 'kafkaBootstrapServers' | 'rabbitmqUrl'>;
  readonly pid: number | undefined;
  crash(): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export type BackendKind = Extract<BenchTransportKind, 'kafka' | 'rabbitmq'>;

export function isBackendKind(kind: BenchTransportKind): kind is BackendKind {
  return kind === 'kafka' || kind === 'rabbitmq';
}

const BACKEND_NAMES: Record<BackendKind, string> = { kafka: 'Kafka', rabbitmq: 'RabbitMQ' };

/** How each backend's node is started, and where a client finds it. */
const STARTERS: Record<BackendKind, () => Promise<{ handle: KafkaHandle | RabbitMqHandle; address: BackendNode['address'] }>> = {
  kafka: async () => {
    const kafka = await startKafka();
    return { handle: kafka, address: { kafkaBootstrapServers: kafka.bootstrapServers } };
  },
  rabbitmq: async () => {
    const rabbit = await startRabbitMq();
    return { handle: rabbit, address: { rabbitmqUrl: rabbit.url } };
  },
};

/** Starts the nodes `kinds` needs; each is stopped by a cleanup handed to `defer`. */
export async function startBackendNodes(
  kinds: readonly BenchTransportKind[],
  defer: (cleanup: () => Promise<void>) => void,
  log: (line: string) => void,
): Promise<Partial<Record<BackendKind, BackendNode>>> {
  const nodes: Partial<Record<BackendKind, BackendNode>> = {};
  for (const kind of kinds.filter(isBackendKind)) {
    log(`starting a ${BACKEND_NAMES[kind]} node of the run's own ...`);
    const { handle, address } = await STARTERS[kind]();
    defer(() => handle.stop());
    log(handle.description);
    nodes[kind] = nodeOf(handle, address);
  }
  return nodes;
}

function nodeOf(handle: KafkaHandle | RabbitMqHandle, address: BackendNode['address']): BackendNode {
  return {
    address,
    get pid() {
      return handle.pid;
    },
    crash: () => handle.kill('SIGKILL'),
    stop: () => handle.kill('SIGTERM'),
    start: () => handle.start(),
  };
}
