/**
 * Pulsar's WebSocket API over `ws` (`--transport websocket`): pure JavaScript, no native code; needs the broker's
 * WebSocket service on. Its option is the service's URL; the Pulsar backend (../index.ts) gives it the rest.
 */
import { z } from 'zod';
import { defineBackend, logTransportStart } from '../../backend.js';
import { checkWebSocketCredentials, refuseUnlessAccepted } from '../credentials-check.js';
import { webSocketUrlFor, type PulsarLink } from '../pulsar-link.js';
import { WebSocketTransport } from './websocket-transport.js';

export const webSocketTransport = defineBackend({
  name: 'websocket',
  settings: {
    /** Base URL of the broker's WebSocket service. Default: derived from `pulsarHost`, port 8080. */
    pulsarWebSocketUrl: z.string().regex(/^wss?:\/\//, 'must start with ws:// or wss://').optional(),
  },
  options: [{ key: 'pulsarWebSocketUrl', flag: 'pulsar-ws-url', env: 'PULSAR_WS_URL', secret: 'url', help: "broker's WebSocket service (default ws://<pulsar host>:8080)" }],
  /** Throws CredentialsRefusedError where the broker refuses the token. */
  async create(settings, link: PulsarLink) {
    const url = webSocketUrlFor({ pulsarHost: link.serviceUrl, pulsarWebSocketUrl: settings.pulsarWebSocketUrl });
    const transport = new WebSocketTransport({
      url,
      logger: link.logger,
      ...(link.token ? { token: link.token } : {}),
      ...(link.subscribers ? { subscribers: link.subscribers } : {}),
      ...(link.topicClients ? { topicClients: link.topicClients } : {}),
    });
    logTransportStart(link.logger, 'websocket', url, link.why);
    await refuseUnlessAccepted(await checkWebSocketCredentials({ webSocketUrl: url, token: link.token }), url, link.token, link.logger, () => transport.close());
    return transport;
  },
});
