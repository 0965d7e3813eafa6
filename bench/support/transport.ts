/**
 * The transports a benchmark can run on: WebSocket always, native where the `pulsar-client` binding loads.
 * Benchmarks compare them side by side, every process of one run (agent, stand-ins, gateway, echo) on the
 * same transport, as in a deployment where everything speaks one protocol.
 */
import { NativeTransport } from '../../src/bus/native-transport.js';
import { loadPulsarClient } from '../../src/bus/pulsar-client-module.js';
import type { Transport } from '../../src/bus/transport.js';
import { WebSocketTransport } from '../../src/bus/websocket-transport.js';

export type BenchTransportKind = 'websocket' | 'native';

/** WebSocket, plus native when the binding loads. */
export async function availableTransports(): Promise<BenchTransportKind[]> {
  try {
    await loadPulsarClient();
    return ['websocket', 'native'];
  } catch {
    return ['websocket'];
  }
}

export async function createBenchTransport(
  kind: BenchTransportKind,
  broker: { webSocketUrl: string; serviceUrl: string },
): Promise<Transport> {
  if (kind === 'native') return NativeTransport.create({ serviceUrl: broker.serviceUrl });
  return new WebSocketTransport({ url: broker.webSocketUrl });
}
