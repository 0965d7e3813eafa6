/**
 * `--transport auto | native | websocket` for the local scripts (`npm run local`, `npm run ask`), chosen as
 * the agent chooses it: auto = native where the pulsar-client binding loads, else WebSocket.
 */
import { NativeTransport } from '../src/bus/native-transport.js';
import type { Transport } from '../src/bus/transport.js';
import { WebSocketTransport } from '../src/bus/websocket-transport.js';

export type TransportChoice = 'auto' | 'native' | 'websocket';

export function transportChoice(value: string | undefined): TransportChoice {
  const choice = value ?? 'auto';
  if (choice !== 'auto' && choice !== 'native' && choice !== 'websocket') {
    throw new Error(`--transport must be auto, native or websocket, got "${choice}"`);
  }
  return choice;
}

/** The `--transport` value of an argv, or undefined. */
export function transportFlag(argv: readonly string[]): string | undefined {
  const i = argv.findIndex((a) => a === '--transport' || a.startsWith('--transport='));
  if (i < 0) return undefined;
  const arg = argv[i] as string;
  return arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[i + 1];
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
