/**
 * Chooses the transport from the settings. `auto` (the default) takes the native binary-protocol transport
 * where the `pulsar-client` binding loads — the protocol TrustGraph's own services speak, which needs nothing
 * extra on the broker — and otherwise Pulsar's WebSocket API.
 */
import type { Logger } from 'pino';
import { brokerAdminUrlFor, webSocketUrlFor, type Settings } from './settings.js';
import { checkNativeCredentials, checkWebSocketCredentials, type CredentialsVerdict } from './bus/credentials-check.js';
import { CredentialsRefusedError } from './bus/errors.js';
import { NativeTransport } from './bus/native-transport.js';
import { SubscriberPresence } from './bus/subscriber-presence.js';
import { KafkaTransport } from './bus/kafka-transport.js';
import { kafkaBrokers, kafkaSecurity } from './bus/kafka-topology.js';
import { RabbitMqTransport } from './bus/rabbitmq-transport.js';
import { rabbitMqUrl } from './bus/rabbitmq-topology.js';
import { loadPulsarClient } from './bus/pulsar-client-module.js';
import type { Transport } from './bus/transport.js';
import { WebSocketTransport } from './bus/websocket-transport.js';
import { errorMessage } from './errors/error-text.js';

export async function createTransport(settings: Settings, logger: Logger): Promise<Transport> {
  if (settings.pubsubBackend === 'rabbitmq') {
    const url = rabbitMqUrl({
      host: settings.rabbitmqHost,
      port: settings.rabbitmqPort,
      username: settings.rabbitmqUsername,
      password: settings.rabbitmqPassword,
      vhost: settings.rabbitmqVhost,
    });
    logStart(logger, 'rabbitmq', url, 'chosen with --pubsub-backend rabbitmq');
    return new RabbitMqTransport({ url, logger });
  }
  if (settings.pubsubBackend === 'kafka') {
    const brokers = kafkaBrokers(settings.kafkaBootstrapServers);
    logStart(logger, 'kafka', `kafka://${brokers.join(',')}`, 'chosen with --pubsub-backend kafka');
    return new KafkaTransport({ brokers, security: kafkaSecurity(settings), maxMessageBytes: settings.kafkaMaxMessageBytes, logger });
  }
  const token = settings.pulsarApiKey;
  const auth = token ? { token } : {};
  const adminUrl = brokerAdminUrlFor(settings);
  const presence = adminUrl ? { subscribers: new SubscriberPresence({ adminUrl, ...auth, logger: logger.child({ component: 'subscriber-presence' }) }) } : {};
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
        ...presence,
        ...(settings.pulsarTlsTrustCertsFile ? { tlsTrustCertsFile: settings.pulsarTlsTrustCertsFile } : {}),
        ...(settings.pulsarListener ? { listenerName: settings.pulsarListener } : {}),
      });
      logStart(logger, 'native', settings.pulsarHost, settings.transport === 'native' ? 'chosen with --transport native' : 'auto: the pulsar-client binding loads');
      const verdict = await checkNativeCredentials({
        serviceUrl: settings.pulsarHost,
        token,
        ...(settings.pulsarTlsTrustCertsFile ? { tlsTrustCertsFile: settings.pulsarTlsTrustCertsFile } : {}),
      });
      await refuseUnless(verdict, settings.pulsarHost, token, logger, () => transport.close());
      return transport;
    } catch (err) {
      // --transport native without the binding: the start fails with the reason (TransportUnavailableError).
      if (settings.transport === 'native') throw err;
      why = `auto: ${errorMessage(err)}`;
    }
  }
  const url = webSocketUrlFor(settings);
  if (settings.pulsarListener) {
    logger.warn({ listener: settings.pulsarListener }, '--pulsar-listener applies to the native transport only; the WebSocket transport connects to --pulsar-ws-url');
  }
  const transport = new WebSocketTransport({ url, logger, ...auth, ...presence });
  logStart(logger, 'websocket', url, why);
  await refuseUnless(await checkWebSocketCredentials({ webSocketUrl: url, token }), url, token, logger, () => transport.close());
  return transport;
}

/** Throws CredentialsRefusedError, naming the option, when the broker refused; an unreachable broker passes. */
async function refuseUnless(
  verdict: CredentialsVerdict,
  url: string,
  token: string | undefined,
  logger: Logger,
  close: () => Promise<void>,
): Promise<void> {
  if (verdict.accepted === undefined) {
    logger.warn({ reason: verdict.reason }, 'Could not check the broker credentials now; the transport keeps trying to connect');
  }
  if (verdict.accepted !== false) return;
  await close().catch(() => undefined);
  const broker = redactUrl(url);
  throw new CredentialsRefusedError(
    token
      ? `the broker at ${broker} refused the token given with --pulsar-api-key (PULSAR_API_KEY): ${verdict.reason}`
      : `the broker at ${broker} requires authentication: set --pulsar-api-key (PULSAR_API_KEY) to a token it accepts (${verdict.reason})`,
  );
}

function logStart(logger: Logger, transport: string, url: string, why: string): void {
  const broker = redactUrl(url);
  logger.info({ transport, broker, why }, `Transport: ${transport}, broker ${broker}`);
}

/** A URL fit for logs: no password and no token in it. A cluster's list of hosts (`pulsar://a:6650,b:6650`) is kept. */
export function redactUrl(url: string): string {
  // No URL parser takes a list of hosts: the first stands for the others while the rest is redacted.
  const hosts = /^([a-z+]+:\/\/(?:[^@/]*@)?)([^/?#]*)/.exec(url);
  const [first, ...others] = (hosts?.[2] ?? '').split(',');
  if (hosts && others.length > 0) return redactUrl(`${hosts[1]}${first}${url.slice(hosts[0].length)}`).replace(first!, [first, ...others].join(','));
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
