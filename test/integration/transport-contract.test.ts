/**
 * The transport contract against the real broker, for every transport that can run here (test/support/
 * transports.ts: native only where the binding loads, and always under CI=true). A transport that cannot run
 * is listed as a skipped test whose title says why.
 */
import { NativeTransport } from '../../src/bus/pulsar/native/native-transport.js';
import { inject } from 'vitest';
import { KafkaTransport } from '../../src/bus/kafka/kafka-transport.js';
import { RabbitMqTransport } from '../../src/bus/rabbitmq/rabbitmq-transport.js';
import { WebSocketTransport } from '../../src/bus/pulsar/websocket/websocket-transport.js';
import { TEST_RABBITMQ_MAX_MESSAGE_BYTES } from '../../dev/rabbitmq-broker.js';
import { DEFAULT_KAFKA_MAX_MESSAGE_BYTES } from '../../src/bus/kafka/kafka-transport.js';
import { brokerUrls, describeTransportContract } from '../support/transport-contract.js';
import { pulsarClientModule, skippedTransports, testTransports } from '../support/transports.js';

const { webSocketUrl, serviceUrl, webServiceUrl } = brokerUrls();
const transports = testTransports();

/** The broker's own `maxMessageSize`, the binary protocol's limit. */
async function brokerMaxMessageSize(): Promise<number> {
  const url = `${webServiceUrl}/admin/v2/brokers/configuration/runtime`;
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  if (!response.ok) throw new Error(`GET ${url} answered HTTP ${response.status}`);
  const value = Number(((await response.json()) as Record<string, string>).maxMessageSize);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`the broker reports no maxMessageSize (${url})`);
  return value;
}

console.info(
  `[transport-contract] ran: ${transports.join(', ')} (${webSocketUrl}, ${serviceUrl})` +
    skippedTransports()
      .map((s) => `; skipped: ${s.kind} — ${s.reason}`)
      .join(''),
);

if (transports.includes('websocket')) {
  describeTransportContract(
    'websocket',
    (logger) =>
      new WebSocketTransport({
        url: webSocketUrl,
        logger,
        reconnect: { initialDelayMs: 100, maxDelayMs: 1000 },
        connectAttempts: 4,
      }),
    { frameLimitBytes: 1_048_576, quietMs: 500, webServiceUrl },
  );
}

if (transports.includes('native')) {
  const maxMessageBytes = await brokerMaxMessageSize();
  const pulsar = pulsarClientModule();
  describeTransportContract(
    'native',
    (logger) => new NativeTransport(pulsar, { serviceUrl, logger, maxMessageBytes }),
    {
      quietMs: 500,
      webServiceUrl,
      frameLimitBytes: maxMessageBytes,
      framePayloadBytes: { tooLarge: maxMessageBytes + 1, justUnder: maxMessageBytes - 1024 },
      // A producer with chunking enabled, as TrustGraph's Python producers may be configured, splits a
      // payload over maxMessageSize into chunks; the consumer must hand it over whole.
      chunkedPayloadBytes: maxMessageBytes + 1024 * 1024,
      publishChunked: async (topic, payload, properties) => {
        const client = new pulsar.Client({ serviceUrl, log: () => undefined });
        try {
          const producer = await client.createProducer({ topic, chunkingEnabled: true, batchingEnabled: false });
          await producer.send({ data: payload, properties });
          await producer.close();
        } finally {
          await client.close();
        }
      },
    },
  );
}

const rabbitmqUrl = inject('rabbitmqUrl');
if (rabbitmqUrl) {
  describeTransportContract('rabbitmq', (logger) => new RabbitMqTransport({ url: rabbitmqUrl, logger, maxMessageBytes: TEST_RABBITMQ_MAX_MESSAGE_BYTES }), {
    quietMs: 500,
    keepsNonPersistent: true,
    frameLimitBytes: TEST_RABBITMQ_MAX_MESSAGE_BYTES,
    framePayloadBytes: { tooLarge: TEST_RABBITMQ_MAX_MESSAGE_BYTES + 1, justUnder: TEST_RABBITMQ_MAX_MESSAGE_BYTES - 1024 },
  });
} else {
  describeTransportContract('rabbitmq', () => {
    throw new Error('not run');
  }, { skip: inject('rabbitmqUnavailable') });
}

const kafkaBootstrapServers = inject('kafkaBootstrapServers');
if (kafkaBootstrapServers) {
  describeTransportContract('kafka', (logger) => new KafkaTransport({ brokers: [kafkaBootstrapServers], logger }), {
    quietMs: 500,
    keepsNonPersistent: true,
    groupsSharePartitions: true,
    frameLimitBytes: DEFAULT_KAFKA_MAX_MESSAGE_BYTES,
    framePayloadBytes: { tooLarge: DEFAULT_KAFKA_MAX_MESSAGE_BYTES + 1, justUnder: DEFAULT_KAFKA_MAX_MESSAGE_BYTES - 1024 },
  });
} else {
  describeTransportContract('kafka', () => {
    throw new Error('not run');
  }, { skip: inject('kafkaUnavailable') });
}

for (const { kind, reason } of skippedTransports()) {
  describeTransportContract(kind, () => {
    throw new Error('not run');
  }, { skip: reason });
}
