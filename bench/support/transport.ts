/**
 * The transports a benchmark can run on: WebSocket always, native where the `pulsar-client` binding loads.
 * Benchmarks compare them side by side, every process of one run (agent, stand-ins, gateway, echo) on the
 * same transport, as in a deployment where everything speaks one protocol.
 */
import { rabbitMqArgs } from '../../dev/rabbitmq-broker.js';
import { KafkaTransport } from '../../src/bus/kafka/kafka-transport.js';
import { NativeTransport } from '../../src/bus/pulsar/native/native-transport.js';
import { loadPulsarClient } from '../../src/bus/pulsar/native/pulsar-client-module.js';
import { RabbitMqTransport } from '../../src/bus/rabbitmq/rabbitmq-transport.js';
import { kafkaBrokers } from '../../src/bus/kafka/topology.js';
import type { Transport } from '../../src/bus/transport.js';
import { WebSocketTransport } from '../../src/bus/pulsar/websocket/websocket-transport.js';
import { topicClientsReader } from '../../src/bus/pulsar/topic-clients.js';

/**
 * `kafka`, `rabbitmq`: TrustGraph's Kafka and RabbitMQ backends, each on a broker of its own (only when asked
 * for with `--transports`).
 */
export type BenchTransportKind = 'websocket' | 'native' | 'kafka' | 'rabbitmq';

/** Where a benchmark's processes connect: the Pulsar broker's URLs, and the Kafka and RabbitMQ brokers' when there are. */
export interface BenchBrokerAddress {
  webSocketUrl: string;
  serviceUrl: string;
  kafkaBootstrapServers?: string;
  /** `amqp://user:password@host:port/vhost`. */
  rabbitmqUrl?: string;
  /**
   * The Pulsar brokers' admin API (comma-separated on a cluster): with it the WebSocket stand-ins and gateway reopen
   * a consumer or producer the WebSocket service lost behind its socket, as the agent does (socket-heal.ts). TrustGraph's own
   * services and gateway speak the binary protocol, which no WebSocket service stands in front of.
   */
  adminUrl?: string;
}

/** WebSocket, plus native when the binding loads. */
export async function availableTransports(): Promise<BenchTransportKind[]> {
  try {
    await loadPulsarClient();
    return ['websocket', 'native'];
  } catch {
    return ['websocket'];
  }
}

export async function createBenchTransport(kind: BenchTransportKind, broker: BenchBrokerAddress): Promise<Transport> {
  if (kind === 'kafka') {
    if (!broker.kafkaBootstrapServers) throw new Error('the kafka transport needs a Kafka broker');
    return new KafkaTransport({ brokers: kafkaBrokers(broker.kafkaBootstrapServers) });
  }
  if (kind === 'rabbitmq') {
    if (!broker.rabbitmqUrl) throw new Error('the rabbitmq transport needs a RabbitMQ broker');
    return new RabbitMqTransport({ url: broker.rabbitmqUrl });
  }
  if (kind === 'native') return NativeTransport.create({ serviceUrl: broker.serviceUrl });
  return new WebSocketTransport({ url: broker.webSocketUrl, ...(broker.adminUrl ? { topicClients: topicClientsReader({ adminUrl: broker.adminUrl }) } : {}) });
}

/** The agent's command-line options that put it on this transport and broker. */
export function agentBusArgs(kind: BenchTransportKind, broker: BenchBrokerAddress): string[] {
  if (kind === 'kafka') return ['--pubsub-backend', 'kafka', '--kafka-bootstrap-servers', broker.kafkaBootstrapServers ?? ''];
  if (kind === 'rabbitmq') return rabbitMqArgs(broker.rabbitmqUrl ?? '');
  return ['--pulsar-ws-url', broker.webSocketUrl, '--transport', kind, ...(broker.serviceUrl ? ['--pulsar-host', broker.serviceUrl] : [])];
}
