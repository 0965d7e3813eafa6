/**
 * The agent on TrustGraph's Kafka backend (`--pubsub-backend kafka`), against the run's real Kafka broker
 * (test/support/global-brokers.ts), with TrustGraph's own Kafka backend code (aiokafka) on the other side:
 * test/support/backend-suites.ts.
 */
import { Kafka, logLevel } from 'kafkajs';
import { describe, inject, it } from 'vitest';
import { agentFlowTopics } from '../../dev/flow-config.js';
import { KafkaTransport } from '../../src/bus/kafka/kafka-transport.js';
import { kafkaTopicFor } from '../../src/bus/kafka/topology.js';
import { queueToTopic } from '../../src/bus/topics.js';
import { backendSuites } from '../support/backend-suites.js';

const kafkaBootstrapServers = inject('kafkaBootstrapServers');

if (kafkaBootstrapServers) {
  backendSuites({
    name: 'Kafka',
    target: { transport: 'kafka', kafkaBootstrapServers },
    connect: () => new KafkaTransport({ brokers: [kafkaBootstrapServers], clientId: 'gateway' }),
    gatewayUrl: `kafka://${kafkaBootstrapServers}`,
    trustgraphArgs: ['--pubsub-backend', 'kafka', '--kafka-bootstrap-servers', kafkaBootstrapServers],
    // TrustGraph makes each topic with one partition, which one member of a group reads at a time; an operator
    // who runs two agents on a flow gives its request topic a partition for each (docs/backends.md).
    beforeMixedFleet: async (workspace) => {
      const admin = new Kafka({ brokers: [kafkaBootstrapServers], logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      try {
        const topic = kafkaTopicFor(queueToTopic(agentFlowTopics(workspace, 'default').request!)).name;
        await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 2 }] });
      } finally {
        await admin.disconnect();
      }
    },
    shares: "the flow's request topic has two partitions, one for each member of the agents' consumer group",
  });
} else {
  describe('the agent on Kafka', () => {
    it.skip(`skipped: ${inject('kafkaUnavailable')}`, () => undefined);
  });
}
