/**
 * The agent on a Pulsar cluster (dev/pulsar-cluster.ts: ZooKeeper, a bookie, two brokers, the WebSocket service),
 * started once for this file, on each transport: the broker owning the agents' request topic is killed, its topics
 * move to the other broker, and the agents keep serving: fresh conversations are answered, none twice. (What was
 * in flight on a moving non-persistent topic may be lost: the broker keeps nothing for a subscription that is
 * away; bench:faults --cluster counts it.) On WebSocket the cluster serves again once the WebSocket service has a
 * consumer back on each subscription it had one on: its own client reconnects them with a backoff of its own.
 *
 * On WebSocket a fresh conversation's MCP tool call goes out on a producer of an agent's that was idle through the
 * kill: the socket heal checks it against the topic's stats before that send and reopens it first if the WebSocket
 * service lost its producer behind it (src/bus/pulsar/websocket/socket-heal.ts, `beforeSend`), since a tool call
 * that failed as possibly published is never sent again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jarNodesUnavailable } from '../../dev/kafka-broker.js';
import { startPulsarCluster, type PulsarCluster } from '../../dev/pulsar-cluster.js';
import { agentFlowTopics } from '../../dev/flow-config.js';
import { queueToTopic } from '../../src/bus/topics.js';
import { clusterTestsSkipped, servesThroughNodeLoss } from '../support/cluster-serving.js';
import { createTestTransport, testTransports } from '../support/transports.js';
import { pino } from 'pino';
import { topicClientsReader } from '../../src/bus/pulsar/topic-clients.js';

// The cluster runs from Maven Central jars, as the Kafka nodes do: the same Java and Maven.
const missing = jarNodesUnavailable();

describe.skipIf(clusterTestsSkipped(missing) !== undefined)('a Pulsar cluster losing the broker that owns the agents\' request topic', () => {
  let pulsar: PulsarCluster;
  beforeAll(async () => {
    pulsar = await startPulsarCluster();
  }, 420_000);
  afterAll(async () => {
    await pulsar?.stop();
  });

  // Every broker's admin API, as an operator gives a cluster's to the agents.
  const brokerAdminUrl = (): string => pulsar.nodes.map((broker) => broker.webServiceUrl).join(',');

  it.each(testTransports())('keeps serving on %s: fresh conversations are answered, none twice', async (kind) => {
    for (const node of pulsar.nodes) if (!node.running) await node.start();
    await servesThroughNodeLoss({
      // The stand-ins' WebSocket consumers and producers heal as the agents' do (TrustGraph's own services speak the
      // binary protocol, with no WebSocket service in front of them): a prompt service whose producer the WebSocket
      // service lost would hold every reply past the agents' 10 s prompt timeout.
      target: { transport: kind, serviceUrl: pulsar.serviceUrl, webSocketUrl: pulsar.webSocketUrl, brokerAdminUrl: brokerAdminUrl(), transportOptions: { topicClients: topicClientsReader({ adminUrl: brokerAdminUrl() }) } },
      // The second replica's sockets heal as the app's do, and so do the gateway stand-in's: TrustGraph's gateway
      // speaks the binary protocol, and the WebSocket service's own client may take minutes to bring back a consumer
      // whose broker died.
      connect: (logger) =>
        createTestTransport(kind, {
          serviceUrl: pulsar.serviceUrl,
          webSocketUrl: pulsar.webSocketUrl,
          logger: logger ?? pino({ level: 'silent' }),
          webSocket: { topicClients: topicClientsReader({ adminUrl: brokerAdminUrl() }) },
        }),
      async loseNode(workspace) {
        const flowTopics = agentFlowTopics(workspace, 'default');
        for (const queue of ['request', 'response', 'prompt-request', 'prompt-response', 'mcp-tool-request', 'mcp-tool-response']) pulsar.servedTopics.add(queueToTopic(flowTopics[queue]!));
        // On WebSocket the cluster serves again once its WebSocket service has its consumers back.
        if (kind === 'websocket') expect(await pulsar.noteWebSocketConsumers(), 'consumers of the WebSocket service').toBeGreaterThan(0);
        await (await pulsar.ownerOf(queueToTopic(flowTopics.request!))).kill('SIGKILL');
        await pulsar.untilServing(180_000);
        console.log(`[pulsar-cluster] ${kind}: waited for ${pulsar.waits.join('; ') || 'nothing'}`);
      },
    });
    pulsar.servedTopics.clear();
  }, 600_000);
});
