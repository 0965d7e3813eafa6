/**
 * The Pulsar backend (`--pubsub-backend pulsar`, TrustGraph's default) with its two transports: the binary
 * protocol through the `pulsar-client` binding (native/) and the WebSocket API (websocket/). `--transport auto`,
 * the default, takes the native one wherever its binding loads, since TrustGraph deployments configure the
 * broker from `broker.conf`, where the WebSocket service is off; otherwise the WebSocket API.
 */
import { z } from 'zod';
import { errorMessage } from '../../errors/index.js';
import { defineBackend, type BackendSettings } from '../backend.js';
import type { Transport } from '../transport.js';
import { nativeTransport } from './native/index.js';
import { brokerAdminUrlFor, type PulsarLink } from './pulsar-link.js';
import { SubscriberPresence } from './subscriber-presence.js';
import { topicClientsReader } from './topic-clients.js';
import { webSocketTransport } from './websocket/index.js';

export { brokerAdminUrlFor, webSocketUrlFor } from './pulsar-link.js';
export { TopicStatsSource, type TopicStats } from './topic-stats.js';

const settings = {
  /** `auto`: native where the pulsar-client binding loads, else websocket. */
  transport: z.enum(['auto', 'websocket', 'native']).default('auto'),
  pulsarHost: z.string().min(1).default('pulsar://pulsar:6650'),
  pulsarApiKey: z.string().optional(),
  ...nativeTransport.settings,
  ...webSocketTransport.settings,
  /** The broker's admin API, read for its drop statistics; `none` turns that off. Default: http://<pulsar host>:8080. */
  brokerAdminUrl: z.string().regex(/^(https?:\/\/|none$)/, 'must start with http:// or https://, or be none').optional(),
};

type PulsarSettings = BackendSettings<typeof settings>;

export const pulsarBackend = defineBackend({
  name: 'pulsar',
  settings,
  options: [
    { key: 'transport', flag: 'transport', env: 'TG_AGENT_TRANSPORT', help: 'auto | native | websocket (default auto: native where the pulsar-client binding loads, else websocket)' },
    { key: 'pulsarHost', flag: 'pulsar-host', short: 'p', env: 'PULSAR_HOST', secret: 'url', help: 'Pulsar service URL (default pulsar://pulsar:6650)' },
    { key: 'pulsarApiKey', flag: 'pulsar-api-key', env: 'PULSAR_API_KEY', secret: 'value', help: 'Pulsar token for authentication' },
    ...nativeTransport.options,
    ...webSocketTransport.options,
    { key: 'brokerAdminUrl', flag: 'broker-admin-url', env: 'TG_AGENT_BROKER_ADMIN_URL', secret: 'url', help: "broker admin API read for its drop statistics every 30 s, after a reconnect for a topic's subscribers, and on WebSocket after a topic moved for the agent's own consumers and producers; on a cluster a comma-separated list, asked in turn (default http://<host>:8080 for each host of --pulsar-host; none = off)" },
    { key: 'brokerAdminUrl', flag: 'pulsar-admin-url', env: 'PULSAR_ADMIN_URL', secret: 'url', help: "TrustGraph's name for --broker-admin-url" },
  ],
  create: (chosen, { logger }) => createPulsarTransport(chosen, logger),
  adminApi(chosen) {
    const url = brokerAdminUrlFor(chosen);
    return url === undefined ? undefined : { url, ...(chosen.pulsarApiKey ? { token: chosen.pulsarApiKey } : {}) };
  },
});

async function createPulsarTransport(chosen: PulsarSettings, logger: PulsarLink['logger']): Promise<Transport> {
  const token = chosen.pulsarApiKey;
  const adminUrl = brokerAdminUrlFor(chosen);
  const link = {
    serviceUrl: chosen.pulsarHost,
    token,
    logger,
    ...(adminUrl ? { subscribers: new SubscriberPresence({ adminUrl, ...(token ? { token } : {}), logger: logger.child({ component: 'subscriber-presence' }) }) } : {}),
    ...(adminUrl ? { topicClients: topicClientsReader({ adminUrl, token }) } : {}),
  };
  let why: string;
  if (chosen.transport === 'websocket') {
    why = 'chosen with --transport websocket';
  } else {
    try {
      const native = chosen.transport === 'native' ? 'chosen with --transport native' : 'auto: the pulsar-client binding loads';
      return await nativeTransport.create(chosen, { ...link, why: native });
    } catch (err) {
      // --transport native without the binding: the start fails with the reason (TransportUnavailableError).
      if (chosen.transport === 'native') throw err;
      why = `auto: ${errorMessage(err)}`;
    }
  }
  if (chosen.pulsarListener) {
    logger.warn({ listener: chosen.pulsarListener }, '--pulsar-listener applies to the native transport only; the WebSocket transport connects to --pulsar-ws-url');
  }
  return webSocketTransport.create(chosen, { ...link, why });
}
