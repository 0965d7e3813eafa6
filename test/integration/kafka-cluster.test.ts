/**
 * The agent on a Kafka cluster of three KRaft nodes (dev/kafka-cluster.ts: replication factor 3,
 * min.insync.replicas 2), started once for this file: the node leading the agents' request topic is killed, a new
 * leader takes over, and every conversation ends: nothing that Kafka acknowledged is lost (every topic has three
 * replicas and every publish waits for the in-sync ones), fresh ones are answered, none twice.
 *
 * The agents publish through kafkajs's idempotent producer, whose retries outlast the election of a new leader: a
 * batch of `next` requests written as its leader died is sent again to the new leader, which drops the copy it
 * has, instead of being reported failed (each iteration ending with an error while the written `next` runs on and
 * answers too: conversations ended twice).
 *
 * A copy of a request that may have been written twice (a `next` sent again after a send Kafka did not confirm,
 * a request read again after its partition came back) is left where a replica runs it or ran it lately
 * (docs/reliability.md, On a cluster).
 */
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKafkaCluster, type KafkaCluster } from '../../dev/kafka-cluster.js';
import { jarNodesUnavailable } from '../../dev/kafka-broker.js';
import { KafkaTransport } from '../../src/bus/kafka/kafka-transport.js';
import { kafkaBrokers, kafkaTopicFor } from '../../src/bus/kafka/topology.js';
import { queueToTopic } from '../../src/bus/topics.js';
import { agentFlowTopics } from '../../dev/flow-config.js';
import { clusterTestsSkipped, servesThroughNodeLoss } from '../support/cluster-serving.js';

const missing = jarNodesUnavailable();

const skipped = clusterTestsSkipped(missing);

describe.skipIf(skipped !== undefined)('a Kafka cluster losing the leader of the agents\' request topic', () => {
  let kafka: KafkaCluster;
  beforeAll(async () => {
    kafka = await startKafkaCluster();
  }, 420_000);
  afterAll(async () => {
    await kafka?.stop();
  });

  it('keeps serving: every conversation in flight ends, fresh ones are answered, none twice', async () => {
    const requestTopic = (workspace: string): string => kafkaTopicFor(queueToTopic(agentFlowTopics(workspace, 'default').request!)).name;
    let replicas: number[] = [];
    const verdict = await servesThroughNodeLoss({
      target: { transport: 'kafka', kafkaBootstrapServers: kafka.bootstrapServers },
      connect: (logger) => new KafkaTransport({ brokers: kafkaBrokers(kafka.bootstrapServers), ...(logger ? { logger } : {}) }),
      async loseNode(workspace) {
        const admin = new Kafka({ brokers: kafkaBrokers(kafka.bootstrapServers), logLevel: logLevel.NOTHING }).admin();
        await admin.connect();
        const { topics } = await admin.fetchTopicMetadata({ topics: [requestTopic(workspace)] });
        replicas = topics[0]!.partitions[0]!.replicas;
        await admin.disconnect();
        await (await kafka.leaderOf(requestTopic(workspace))).kill('SIGKILL');
        await kafka.untilServing(120_000);
      },
    });
    // The agents made the topic with the cluster's replication factor, where TrustGraph asks for one replica.
    expect(replicas).toHaveLength(3);
    expect(verdict.inFlight.lost, 'conversations in flight that never ended').toBe(0);
  }, 420_000);
});
