/**
 * The transports a benchmark can run on: WebSocket always, native where the `pulsar-client` binding loads.
 * Benchmarks compare them side by side, every process of one run (agent, stand-ins, gateway, echo) on the
 * same transport, as in a deployment where everything speaks one protocol.
 */
import { KafkaTransport } from '../../src/bus/kafka-transport.js';
import { NativeTransport } from '../../src/bus/native-transport.js';
import { loadPulsarClient } from '../../src/bus/pulsar-client-module.js';
import type { Transport } from '../../src/bus/transport.js';
import { WebSocketTransport } from '../../src/bus/websocket-transport.js';

/** `kafka`: TrustGraph's Kafka backend, on a broker of its own (only when asked for with `--transports`). */
export type BenchTransportKind = 'websocket' | 'native' | 'kafka';

/** Where a benchmark's processes connect: the Pulsar broker's URLs, and the Kafka broker's when there is one. */
export interface BenchBrokerAddress {
  webSocketUrl: string;
  serviceUrl: string;
  kafkaBootstrapServers?: string;
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
    return new KafkaTransport({ brokers: [broker.kafkaBootstrapServers] });
  }
  if (kind === 'native') return NativeTransport.create({ serviceUrl: broker.serviceUrl });
  return new WebSocketTransport({ url: broker.webSocketUrl });
}
