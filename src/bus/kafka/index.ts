/**
 * The Kafka backend (`--pubsub-backend kafka`): TrustGraph's Kafka options and topic layout (topology.ts), over
 * kafkajs (kafka-transport.ts).
 */
import { z } from 'zod';
import { defineBackend, logTransportStart, positiveInt } from '../backend.js';
import { KafkaTransport } from './kafka-transport.js';
import { kafkaBrokers, kafkaSecurity } from './topology.js';

export const kafkaBackend = defineBackend({
  name: 'kafka',
  settings: {
    kafkaBootstrapServers: z.string().min(1).default('kafka:9092'),
    kafkaSecurityProtocol: z.string().min(1).default('PLAINTEXT'),
    kafkaSaslMechanism: z.string().min(1).optional(),
    kafkaSaslUsername: z.string().min(1).optional(),
    kafkaSaslPassword: z.string().min(1).optional(),
    /** tg-agent's own: the largest message it publishes on Kafka; the broker's `message.max.bytes` less headroom. */
    kafkaMaxMessageBytes: positiveInt(1024, 1024 * 1024 * 1024).default(1_000_000),
  },
  options: [
    { key: 'kafkaBootstrapServers', flag: 'kafka-bootstrap-servers', env: 'KAFKA_BOOTSTRAP_SERVERS', help: 'Kafka brokers, host:port comma-separated, with --pubsub-backend kafka (default kafka:9092)' },
    { key: 'kafkaSecurityProtocol', flag: 'kafka-security-protocol', env: 'KAFKA_SECURITY_PROTOCOL', help: 'PLAINTEXT | SSL | SASL_PLAINTEXT | SASL_SSL (default PLAINTEXT)' },
    { key: 'kafkaSaslMechanism', flag: 'kafka-sasl-mechanism', env: 'KAFKA_SASL_MECHANISM', help: 'PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512 (default PLAIN)' },
    { key: 'kafkaSaslUsername', flag: 'kafka-sasl-username', env: 'KAFKA_SASL_USERNAME', help: 'Kafka SASL user' },
    { key: 'kafkaSaslPassword', flag: 'kafka-sasl-password', env: 'KAFKA_SASL_PASSWORD', secret: 'value', help: 'Kafka SASL password (prefer the environment variable)' },
    { key: 'kafkaMaxMessageBytes', flag: 'kafka-max-message-bytes', env: 'TG_AGENT_KAFKA_MAX_MESSAGE_BYTES', help: "largest message published on Kafka: the broker's message.max.bytes less room for headers (default 1000000)" },
  ],
  check: (chosen) => void kafkaSecurity(chosen),
  async create(chosen, { logger }) {
    const brokers = kafkaBrokers(chosen.kafkaBootstrapServers);
    logTransportStart(logger, 'kafka', `kafka://${brokers.join(',')}`, 'chosen with --pubsub-backend kafka');
    return new KafkaTransport({ brokers, security: kafkaSecurity(chosen), maxMessageBytes: chosen.kafkaMaxMessageBytes, logger });
  },
});
