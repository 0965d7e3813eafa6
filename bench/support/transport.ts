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
import { pino, type Logger } from 'pino';
import { SubscriberPresence } from '../../src/bus/pulsar/subscriber-presence.js';
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
   * a consumer or producer the WebSocket service lost behind its socket, and gate each publish on the links it needs,
   * as the agent does (socket-heal.ts, connection-status.ts). TrustGraph's own services and gateway speak the binary
   * protocol, which no WebSocket service stands in front of.
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

/** `logger`: the transport's own log (reconnects, the WebSocket socket heal); silent without it. */
export async function createBenchTransport(kind: BenchTransportKind, broker: BenchBrokerAddress, logger?: Logger): Promise<Transport> {
  if (kind === 'kafka') {
    if (!broker.kafkaBootstrapServers) throw new Error('the kafka transport needs a Kafka broker');
    return new KafkaTransport({ brokers: kafkaBrokers(broker.kafkaBootstrapServers), ...(logger ? { logger } : {}) });
  }
  if (kind === 'rabbitmq') {
    if (!broker.rabbitmqUrl) throw new Error('the rabbitmq transport needs a RabbitMQ broker');
    return new RabbitMqTransport({ url: broker.rabbitmqUrl, ...(logger ? { logger } : {}) });
  }
  if (kind === 'native') return NativeTransport.create({ serviceUrl: broker.serviceUrl, ...(logger ? { logger } : {}) });
  // With the admin API as the agent has it: the socket heal, and publishes gated on the links each needs (with the
  // subscriber check) rather than on every link of this one transport, which the gateway and every stand-in share
  // here while each is a process of its own in a real deployment.
  const admin = broker.adminUrl
    ? { topicClients: topicClientsReader({ adminUrl: broker.adminUrl }), subscribers: new SubscriberPresence({ adminUrl: broker.adminUrl, logger: logger ?? pino({ level: 'silent' }) }) }
    : {};
  return new WebSocketTransport({ url: broker.webSocketUrl, ...(logger ? { logger } : {}), ...admin });
}

/** The agent's command-line options that put it on this transport and broker. */
export function agentBusArgs(kind: BenchTransportKind, broker: BenchBrokerAddress): string[] {
  if (kind === 'kafka') return ['--pubsub-backend', 'kafka', '--kafka-bootstrap-servers', broker.kafkaBootstrapServers ?? ''];
  if (kind === 'rabbitmq') return rabbitMqArgs(broker.rabbitmqUrl ?? '');
  return ['--pulsar-ws-url', broker.webSocketUrl, '--transport', kind, ...(broker.serviceUrl ? ['--pulsar-host', broker.serviceUrl] : [])];
}
