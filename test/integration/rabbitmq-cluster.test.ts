/**
 * The agent on a RabbitMQ cluster of three nodes (dev/rabbitmq-cluster.ts: TrustGraph's queues mirrored by policy,
 * clients behind a balancer), started once for this file: the node holding the agents' request queue is killed,
 * a mirror takes over, and the agents keep serving: fresh conversations are answered, none twice. (A conversation
 * in flight may end twice when the node went before it applied a replica's ack and the mirror delivered the
 * request again to the other replica; it is counted apart, docs/reliability.md.)
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { rabbitMqUnavailable, TEST_RABBITMQ_MAX_MESSAGE_BYTES } from '../../dev/rabbitmq-broker.js';
import { startRabbitMqCluster, type RabbitMqCluster } from '../../dev/rabbitmq-cluster.js';
import { agentFlowTopics } from '../../dev/flow-config.js';
import { RabbitMqTransport } from '../../src/bus/rabbitmq/rabbitmq-transport.js';
import { exchangeFor } from '../../src/bus/rabbitmq/topology.js';
import { flowSubscriptionName, queueToTopic } from '../../src/bus/topics.js';
import { clusterTestsSkipped, servesThroughNodeLoss } from '../support/cluster-serving.js';

const missing = rabbitMqUnavailable();

describe.skipIf(clusterTestsSkipped(missing) !== undefined)('a RabbitMQ cluster losing the node that holds the agents\' request queue', () => {
  let rabbit: RabbitMqCluster;
  beforeAll(async () => {
    rabbit = await startRabbitMqCluster();
  }, 420_000);
  afterAll(async () => {
    await rabbit?.stop();
  });

  it('keeps serving: fresh conversations are answered, none twice', async () => {
    await servesThroughNodeLoss({
      target: { transport: 'rabbitmq', rabbitmqUrl: rabbit.url },
      connect: (logger) => new RabbitMqTransport({ url: rabbit.url, maxMessageBytes: TEST_RABBITMQ_MAX_MESSAGE_BYTES, ...(logger ? { logger } : {}) }),
      async loseNode(workspace) {
        const queue = `${exchangeFor(queueToTopic(agentFlowTopics(workspace, 'default').request!)).exchange}.${flowSubscriptionName('agent-manager', workspace, 'default', 'request')}`;
        await (await rabbit.nodeHolding(queue)).kill('SIGKILL');
        await rabbit.untilServing(120_000);
      },
    });
  }, 420_000);
});
