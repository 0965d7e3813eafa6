/**
 * Where a topic lives on Kafka, exactly as TrustGraph's Kafka backend puts it
 * (`trustgraph/base/async_kafka_backend.py`), so that tg-agent and TrustGraph's services meet on the same
 * topics and consumer groups.
 *
 * The rest of tg-agent names topics as Pulsar does (topics.ts: queue id `class:topicspace:topic` →
 * `non-persistent://topicspace/class/topic`); this turns that back into TrustGraph's Kafka names:
 *
 * - every topic is the Kafka topic `topicspace.class.topic`, colons in the topic turned into dots; TrustGraph
 *   makes it with one partition, kept seven days on `flow` topics and five minutes on the others (and one replica,
 *   where tg-agent takes the cluster's `default.replication.factor`: kafka-transport.ts);
 * - TrustGraph's producer waits for every in-sync replica (`acks=all`) on `flow` topics, for the leader only
 *   otherwise; tg-agent's waits for every in-sync replica on every topic (kafka-transport.ts says why);
 * - a `response` or `notify` subscriber joins a consumer group of its own (`<subscription>-<uuid>`), so every
 *   subscriber sees every message (a reply, a config push); a reply meant for another requester is told apart
 *   by its `id`;
 * - any other subscription is the consumer group named as the subscription: its members share the topic's
 *   partitions, so on TrustGraph's one-partition topics one member at a time reads.
 *
 * Where a group that has never committed starts differs on purpose: TrustGraph's reply groups start at the
 * earliest offset kept (up to five minutes of other requesters' replies, read and dropped) and its other groups
 * at the latest offset after their first fetch (missing what was published before it). tg-agent starts every
 * new group where the topic ends when it subscribes, committed before the group joins (kafka-transport.ts).
 *
 * Durable (seven days) is what maps to a `persistent://` topic: TrustGraph's `flow` class, and our own
 * persistent topics, such as the supervisor's aggregation topic.
 */
import { randomUUID } from 'node:crypto';
import type { KafkaConfig, SASLOptions } from 'kafkajs';
import { BackendOptionsError } from '../backend.js';
import { QUEUE_CLASSES, splitPulsarTopic, type QueueClass } from '../topics.js';

/** TrustGraph's retention of `flow` topics (LONG_RETENTION_MS) and of every other class (SHORT_RETENTION_MS). */
export const KAFKA_LONG_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
export const KAFKA_SHORT_RETENTION_MS = 300 * 1000;

export interface KafkaTopic {
  /** `topicspace.class.topic`. */
  name: string;
  /** TrustGraph's class, when the topic's namespace is one. */
  cls: QueueClass | undefined;
  /** Kept long (TrustGraph also has it acknowledged by every in-sync replica). */
  durable: boolean;
  /** `retention.ms` when tg-agent is the one to create the topic. */
  retentionMs: number;
}

export interface KafkaGroup {
  groupId: string;
  /** Where a group with no committed offset starts: the earliest offset kept, or where the topic ends (kafka-transport.ts). */
  fromBeginning: boolean;
  /** A group of this subscriber's own, removed from the broker when it closes. */
  private: boolean;
}

export function kafkaTopicFor(topic: string): KafkaTopic {
  const { persistence, tenant, namespace, topic: local } = splitPulsarTopic(topic);
  const cls = (QUEUE_CLASSES as readonly string[]).includes(namespace) ? (namespace as QueueClass) : undefined;
  // TrustGraph's `flow` topics map to persistent Pulsar topics and its other classes to non-persistent ones.
  const durable = persistence === 'persistent';
  return {
    name: `${tenant}.${namespace}.${local}`.replaceAll(':', '.'),
    cls,
    durable,
    retentionMs: durable ? KAFKA_LONG_RETENTION_MS : KAFKA_SHORT_RETENTION_MS,
  };
}

export function kafkaGroupFor(where: KafkaTopic, subscription: string): KafkaGroup {
  if (where.cls === 'response' || where.cls === 'notify') {
    return { groupId: `${subscription}-${randomUUID()}`, fromBeginning: false, private: true };
  }
  return { groupId: subscription, fromBeginning: false, private: false };
}

/** `--kafka-bootstrap-servers`, comma-separated `host:port` as TrustGraph takes it, as a list. */
export function kafkaBrokers(bootstrapServers: string): string[] {
  return bootstrapServers
    .split(',')
    .map((server) => server.trim())
    .filter((server) => server !== '');
}

/** The SASL mechanisms kafkajs speaks, by the names TrustGraph's `--kafka-sasl-mechanism` takes. */
const SASL_MECHANISMS = { PLAIN: 'plain', 'SCRAM-SHA-256': 'scram-sha-256', 'SCRAM-SHA-512': 'scram-sha-512' } as const;

/** The settings' names of TrustGraph's Kafka options. */
export interface KafkaSecurityOptions {
  kafkaSecurityProtocol: string;
  kafkaSaslMechanism?: string | undefined;
  kafkaSaslUsername?: string | undefined;
  kafkaSaslPassword?: string | undefined;
}

/**
 * TLS and SASL for the client from TrustGraph's options: `PLAINTEXT`, `SSL`, `SASL_PLAINTEXT` or `SASL_SSL`,
 * and a mechanism among PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512. Throws a BackendOptionsError, naming the option,
 * on anything else.
 */
export function kafkaSecurity(options: KafkaSecurityOptions): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  const protocol = options.kafkaSecurityProtocol.toUpperCase();
  if (!['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'].includes(protocol)) {
    throw new BackendOptionsError(`--kafka-security-protocol ${options.kafkaSecurityProtocol}: expected PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL`);
  }
  const ssl = protocol.endsWith('SSL');
  if (!protocol.startsWith('SASL')) return { ssl };
  const mechanism = SASL_MECHANISMS[(options.kafkaSaslMechanism ?? 'PLAIN').toUpperCase() as keyof typeof SASL_MECHANISMS];
  if (!mechanism) throw new BackendOptionsError(`--kafka-sasl-mechanism ${options.kafkaSaslMechanism}: expected PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512`);
  const { kafkaSaslUsername: username, kafkaSaslPassword: password } = options;
  if (!username || !password) {
    throw new BackendOptionsError(`--kafka-security-protocol ${protocol} needs --kafka-sasl-username and --kafka-sasl-password`);
  }
  const sasl: SASLOptions = mechanism === 'plain' ? { mechanism, username, password } : mechanism === 'scram-sha-256' ? { mechanism, username, password } : { mechanism, username, password };
  return { ssl, sasl };
}
