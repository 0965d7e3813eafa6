/**
 * Chooses the transport from the settings. `auto` (the default) takes the native binary-protocol transport
 * where the `pulsar-client` binding loads — the protocol TrustGraph's own services speak, which needs nothing
 * extra on the broker — and otherwise Pulsar's WebSocket API.
 */
import type { Logger } from 'pino';
import { webSocketUrlFor, type Settings } from '../settings.js';
import { NativeTransport, loadPulsarClient } from './native-transport.js';
import type { Transport } from './transport.js';
import { WebSocketTransport } from './websocket-transport.js';

export async function createTransport(settings: Settings, logger: Logger): Promise<Transport> {
  const token = settings.pulsarApiKey;
  const auth = token ? { token } : {};
  let why: string;
  if (settings.transport === 'websocket') {
    why = 'chosen with --transport websocket';
  } else {
    try {
      const binding = await loadPulsarClient();
      const transport = new NativeTransport(binding, {
        serviceUrl: settings.pulsarHost,
        logger,
        ...auth,
        ...(settings.pulsarTlsTrustCertsFile ? { tlsTrustCertsFile: settings.pulsarTlsTrustCertsFile } : {}),
      });
      logStart(logger, 'native', settings.pulsarHost, settings.transport === 'native' ? 'chosen with --transport native' : 'auto: the pulsar-client binding loads');
      return transport;
    } catch (err) {
      // --transport native without the binding: the start fails with the reason (TransportUnavailableError).
      if (settings.transport === 'native') throw err;
      why = `auto: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
  const url = webSocketUrlFor(settings);
  const transport = new WebSocketTransport({ url, logger, ...auth });
  logStart(logger, 'websocket', url, why);
  return transport;
}

function logStart(logger: Logger, transport: string, url: string, why: string): void {
  const broker = redactUrl(url);
  logger.info({ transport, broker, why }, `Transport: ${transport}, broker ${broker}`);
}

/** A URL fit for logs: no password and no token in it. */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '(unparseable URL)';
  }
  if (parsed.password) parsed.password = '***';
  for (const key of [...parsed.searchParams.keys()]) {
    if (/token|key|secret|password|auth/i.test(key)) parsed.searchParams.set(key, '***');
  }
  return parsed.toString().replace(/\/$/, '');
}
