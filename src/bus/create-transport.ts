/** Chooses the transport from the settings (DESIGN decision 12). */
import type { Logger } from 'pino';
import { webSocketUrlFor, type Settings } from '../settings.js';
import { NativeTransport } from './native-transport.js';
import type { Transport } from './transport.js';
import { WebSocketTransport } from './websocket-transport.js';

export async function createTransport(settings: Settings, logger: Logger): Promise<Transport> {
  const token = settings.pulsarApiKey;
  if (settings.transport === 'native') {
    return NativeTransport.create({ serviceUrl: settings.pulsarHost, logger, ...(token ? { token } : {}) });
  }
  return new WebSocketTransport({ url: webSocketUrlFor(settings), logger, ...(token ? { token } : {}) });
}
