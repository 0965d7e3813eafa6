/**
 * `--transport auto | native | websocket` for the local scripts (`npm run local`, `npm run ask`), chosen as
 * the agent chooses it: auto = native where the pulsar-client binding loads, else WebSocket.
 */
import { NativeTransport } from '../src/bus/pulsar/native/native-transport.js';
import type { Transport } from '../src/bus/transport.js';
import { WebSocketTransport } from '../src/bus/pulsar/websocket/websocket-transport.js';

export type TransportChoice = 'auto' | 'native' | 'websocket';

export function transportChoice(value: string | undefined): TransportChoice {
  const choice = value ?? 'auto';
  if (choice !== 'auto' && choice !== 'native' && choice !== 'websocket') {
    throw new Error(`--transport must be auto, native or websocket, got "${choice}"`);
  }
  return choice;
}

/** The value of `--<name>` in an argv (`--name value` or `--name=value`), or undefined. */
export function flagValue(argv: readonly string[], name: string): string | undefined {
  const i = argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i < 0) return undefined;
  const arg = argv[i] as string;
  return arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[i + 1];
}

/** The `--transport` value of an argv, or undefined. */
export function transportFlag(argv: readonly string[]): string | undefined {
  return flagValue(argv, 'transport');
}

/** `--pubsub-backend pulsar | kafka | rabbitmq` of the local scripts (default pulsar). */
export function backendChoice(value: string | undefined): 'pulsar' | 'kafka' | 'rabbitmq' {
  const choice = value ?? 'pulsar';
  if (choice !== 'pulsar' && choice !== 'kafka' && choice !== 'rabbitmq') throw new Error(`--pubsub-backend must be pulsar, kafka or rabbitmq, got "${choice}"`);
  return choice;
}

export async function openTransport(
  choice: TransportChoice,
  broker: { webSocketUrl: string; serviceUrl: string },
): Promise<Transport> {
  if (choice !== 'websocket') {
    try {
      return await NativeTransport.create({ serviceUrl: broker.serviceUrl });
    } catch (err) {
      if (choice === 'native') throw err;
    }
  }
  return new WebSocketTransport({ url: broker.webSocketUrl, connectAttempts: 2 });
}
