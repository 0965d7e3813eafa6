import { describe, expect, it } from 'vitest';
import { KAFKA_LONG_RETENTION_MS, KAFKA_SHORT_RETENTION_MS, kafkaBrokers, kafkaGroupFor, kafkaSecurity, kafkaTopicFor } from '../../../src/bus/kafka/topology.js';
import { queueToTopic } from '../../../src/bus/topics.js';

describe("TrustGraph's Kafka names", () => {
  it('puts a queue id on the topic topicspace.class.topic, colons turned into dots, durable and kept long for flow topics only', () => {
    expect(kafkaTopicFor(queueToTopic('request:tg:agent:default:default'))).toEqual({
      name: 'tg.request.agent.default.default',
      cls: 'request',
      durable: false,
      retentionMs: KAFKA_SHORT_RETENTION_MS,
    });
    expect(kafkaTopicFor(queueToTopic('notify:tg:config'))).toMatchObject({ name: 'tg.notify.config', durable: false });
    expect(kafkaTopicFor(queueToTopic('flow:tg:triples-store:default'))).toEqual({
      name: 'tg.flow.triples-store.default',
      cls: 'flow',
      durable: true,
      retentionMs: KAFKA_LONG_RETENTION_MS,
    });
    // Our own persistent topic in TrustGraph's request class: the supervisor's aggregation topic.
    expect(kafkaTopicFor('persistent://tg/request/agent:ws:flow-aggregation')).toMatchObject({ name: 'tg.request.agent.ws.flow-aggregation', durable: true });
  });

  it('gives response and notify subscribers a group of their own, and every other subscription the group named as it', () => {
    const replies = kafkaGroupFor(kafkaTopicFor(queueToTopic('response:tg:prompt:default')), 'rr-0a1b2c');
    expect(replies).toMatchObject({ fromBeginning: false, private: true });
    expect(replies.groupId).toMatch(/^rr-0a1b2c-[0-9a-f-]{36}$/);
    expect(kafkaGroupFor(kafkaTopicFor(queueToTopic('response:tg:prompt:default')), 'rr-0a1b2c').groupId).not.toBe(replies.groupId);
    expect(kafkaGroupFor(kafkaTopicFor(queueToTopic('request:tg:agent:w:f')), 'agent-manager--w--f--request')).toEqual({
      groupId: 'agent-manager--w--f--request',
      fromBeginning: false,
      private: false,
    });
  });

  it('reads the bootstrap servers as TrustGraph takes them', () => {
    expect(kafkaBrokers('kafka-1:9092, kafka-2:9092,')).toEqual(['kafka-1:9092', 'kafka-2:9092']);
  });

  it("maps TrustGraph's security options, and names the option that is wrong", () => {
    expect(kafkaSecurity({ kafkaSecurityProtocol: 'PLAINTEXT' })).toEqual({ ssl: false });
    expect(kafkaSecurity({ kafkaSecurityProtocol: 'SSL' })).toEqual({ ssl: true });
    expect(kafkaSecurity({ kafkaSecurityProtocol: 'SASL_SSL', kafkaSaslMechanism: 'SCRAM-SHA-512', kafkaSaslUsername: 'u', kafkaSaslPassword: 'p' })).toEqual({
      ssl: true,
      sasl: { mechanism: 'scram-sha-512', username: 'u', password: 'p' },
    });
    expect(kafkaSecurity({ kafkaSecurityProtocol: 'sasl_plaintext', kafkaSaslUsername: 'u', kafkaSaslPassword: 'p' })).toEqual({
      ssl: false,
      sasl: { mechanism: 'plain', username: 'u', password: 'p' },
    });
    expect(() => kafkaSecurity({ kafkaSecurityProtocol: 'TLS' })).toThrow(/--kafka-security-protocol TLS/);
    expect(() => kafkaSecurity({ kafkaSecurityProtocol: 'SASL_SSL', kafkaSaslMechanism: 'GSSAPI', kafkaSaslUsername: 'u', kafkaSaslPassword: 'p' })).toThrow(/--kafka-sasl-mechanism GSSAPI/);
    expect(() => kafkaSecurity({ kafkaSecurityProtocol: 'SASL_SSL' })).toThrow(/needs --kafka-sasl-username and --kafka-sasl-password/);
  });
});
