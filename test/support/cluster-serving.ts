/**
 * The main path on a real cluster (dev/kafka-cluster.ts, dev/rabbitmq-cluster.ts, dev/pulsar-cluster.ts): two
 * agent replicas serve one flow while a gateway keeps conversations going; a node of the cluster is killed; once
 * the cluster serves again, every fresh conversation is answered, and none is answered twice. Each backend's test
 * file starts its cluster once, in its own `beforeAll`, so a cluster runs only while its test does.
 */
import type { Logger } from 'pino';
import { expect } from 'vitest';
import { createAgentApp, type AgentApp } from '../../src/app.js';
import type { Transport } from '../../src/bus/transport.js';
import { SettingsSchema, type Settings } from '../../src/settings.js';
import { startAgentHarness, waitUntil, type AgentHarness } from './agent-harness.js';
import { startGatewayClient, type GatewayClient } from './gateway-client.js';
import type { AgentHarnessOptions } from './harness/harness-types.js';
import { capturingLogger } from './log-capture.js';
import { freshAnswered, keepInFlight, lookupConversation } from './conversations-in-flight.js';

/**
 * Why the cluster tests do not run in this run, or undefined when they do. Each starts a cluster of three JVMs or
 * Erlang nodes and takes minutes on a 2-core machine, so they run only when asked (`TG_TEST_CLUSTERS=1`); then a
 * missing Java or RabbitMQ skips them, except under `CI=true`, where it fails.
 */
export function clusterTestsSkipped(missing: string | undefined): string | undefined {
  if (process.env.TG_TEST_CLUSTERS !== '1') return 'TG_TEST_CLUSTERS=1 runs the cluster tests';
  return process.env.CI === 'true' ? undefined : missing;
}

export interface ClusterUnderTest {
  /** Where the harness (replica A, the stand-ins) runs: its transport kind and the cluster's address. */
  target: Pick<AgentHarnessOptions, 'transport' | 'kafkaBootstrapServers' | 'rabbitmqUrl' | 'serviceUrl' | 'webSocketUrl'>;
  /** A transport of its own on the cluster (replica B, the gateway). */
  connect(logger?: Logger): Transport;
  /** Kills the node the agents depend on most (`workspace`'s request topic or queue); resolves once the cluster serves again. */
  loseNode(workspace: string): Promise<void>;
}

export interface ServingVerdict {
  /** Conversations sent before the cluster served again: how each ended (`lost`: no final message). */
  inFlight: { answered: number; errors: number; lost: number; duplicated: number };
  fresh: number;
}

const IN_FLIGHT = 8;
const FRESH = 16;
async function startReplica(h: AgentHarness, transport: Transport, logger: Logger): Promise<AgentApp> {
  const settings: Settings = Object.freeze({ ...SettingsSchema.parse({}), ...h.settings, metricsPort: 0 });
  const app = await createAgentApp(settings, transport, logger);
  await app.start();
  await waitUntil(() => app.service.readiness().ready, 'the second replica to be ready', 60_000);
  return app;
}

/**
 * Runs the scenario and checks what holds on every backend: every fresh conversation answered, none twice, both
 * replicas ready again. Returns the in-flight tally for what the backend adds.
 */
export async function servesThroughNodeLoss(cluster: ClusterUnderTest): Promise<ServingVerdict> {
  const capture = capturingLogger();
  const conversation = lookupConversation('cluster');
  const harness = await startAgentHarness({
    ...cluster.target,
    script: conversation.script,
    tools: conversation.tools,
    mcpTools: conversation.mcpTools,
    // A reply lost with a node ends its call within seconds, not TrustGraph's ten minutes.
    settings: { concurrency: 16, requestTimeoutSeconds: 10 },
  });
  const replicaTransport = cluster.connect(capture.logger.child({ side: 'replica' }));
  const gatewayTransport = cluster.connect();
  let replica: AgentApp | undefined;
  let gateway: GatewayClient | undefined;
  try {
    replica = await startReplica(harness, replicaTransport, capture.logger as Logger);
    gateway = await startGatewayClient({ transport: gatewayTransport, workspace: harness.workspace });
    const g = gateway;
    const warm = await Promise.all(Array.from({ length: 4 }, () => g.send({ question: 'warm up' })));
    await g.waitEnded(warm, 60_000);

    // Conversations in flight until the cluster serves again.
    const inFlight = keepInFlight(g, IN_FLIGHT);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await cluster.loseNode(harness.workspace);
    await inFlight.stop();
    const before = inFlight.ids;

    await freshAnswered(g, FRESH, conversation.answer);
    await waitUntil(() => replica!.service.readiness().ready && harness.service.readiness().ready, 'both replicas to be ready again', 60_000);
    // A late second final message would arrive now.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const verdict: ServingVerdict = { inFlight: { answered: 0, errors: 0, lost: 0, duplicated: 0 }, fresh: FRESH };
    for (const id of before) {
      const c = g.conversation(id);
      if (c.ends === 0) verdict.inFlight.lost++;
      else if (c.ends > 1) verdict.inFlight.duplicated++;
      else if (g.last(id).error || g.last(id).content !== conversation.answer) verdict.inFlight.errors++;
      else verdict.inFlight.answered++;
    }
    expect(verdict.inFlight.duplicated, 'conversations answered twice').toBe(0);
    expect(verdict.inFlight.answered, 'conversations in flight that were answered').toBeGreaterThan(0);
    return verdict;
  } finally {
    await gateway?.close().catch(() => undefined);
    await replica?.stop().catch(() => undefined);
    await replicaTransport.close().catch(() => undefined);
    await gatewayTransport.close().catch(() => undefined);
    await harness.stop();
  }
}
