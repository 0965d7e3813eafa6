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
import { elapsed, explained, logLines, recordStatus, type StatusHistory } from './failure-report.js';

/**
 * Why the cluster tests do not run here, or undefined when they do: a missing Java and Maven (Kafka, Pulsar) or
 * RabbitMQ skips them, except under `CI=true`, where starting the cluster fails instead.
 */
export function clusterTestsSkipped(missing: string | undefined): string | undefined {
  return process.env.CI === 'true' ? undefined : missing;
}

export interface ClusterUnderTest {
  /** Where the harness (replica A, the stand-ins) runs: its transport kind and the cluster's address. */
  target: Pick<AgentHarnessOptions, 'transport' | 'kafkaBootstrapServers' | 'rabbitmqUrl' | 'serviceUrl' | 'webSocketUrl' | 'brokerAdminUrl' | 'transportOptions'>;
  /** A transport of its own on the cluster (replica B, the gateway). */
  connect(logger?: Logger): Transport;
  /** Kills the node the agents depend on most (`workspace`'s request topic or queue); resolves once the cluster serves again. */
  loseNode(workspace: string): Promise<void>;
}

export interface ServingVerdict {
  /**
   * Conversations sent before the cluster served again: how each ended (`lost`: no final message). `redelivered`:
   * ended twice because the broker delivered the request again, marked redelivered, to a replica that had not
   * run it (an ack lost with a RabbitMQ node, docs/reliability.md); `duplicated`: ended twice otherwise.
   */
  inFlight: { answered: number; errors: number; lost: number; duplicated: number; redelivered: number };
  fresh: number;
}

/** What a replica logs when it runs a request delivered again that it had not taken before (src/flow/flow-runtime.ts). */
const RAN_REDELIVERED = 'Agent request delivered again, not taken here before: running it';

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
    logger: capture.logger.child({ replica: 'A' }) as Logger,
    // A reply lost with a node ends its call within seconds, not TrustGraph's ten minutes.
    settings: { concurrency: 16, requestTimeoutSeconds: 10 },
  });
  const replicaTransport = cluster.connect(capture.logger.child({ replica: 'B' }));
  const gatewayTransport = cluster.connect();
  let replica: AgentApp | undefined;
  let gateway: GatewayClient | undefined;
  const statuses: StatusHistory[] = [recordStatus(replicaTransport, 'replica B'), recordStatus(gatewayTransport, 'gateway')];
  const marks: string[] = [];
  const mark = (what: string): void => void marks.push(`${elapsed()} ${what}`);
  // The conversations that ended other than once, or wrongly: each with the log lines that name it.
  const report = (): Record<string, string[]> => {
    const odd = gateway ? [...gateway.conversations.values()].filter((c) => c.ends !== 1 || gateway!.last(c.id).content !== conversation.answer) : [];
    return {
      steps: marks,
      'transport status': statuses.flatMap((s) => s.lines),
      'conversations that did not end once with the answer': odd.map((c) => `${c.id}: ${c.ends} final message(s) at ${c.endedAt ? elapsed(c.endedAt) : '-'}, ${c.responses.length} response(s)`),
      'agent log (warnings, errors and lines naming those conversations)': logLines(capture, odd.map((c) => c.id).slice(0, 10), 300),
    };
  };
  try {
    replica = await startReplica(harness, replicaTransport, capture.logger.child({ replica: 'B' }) as Logger);
    gateway = await startGatewayClient({ transport: gatewayTransport, workspace: harness.workspace });
    const g = gateway;
    return await explained(async () => {
      const warm = await Promise.all(Array.from({ length: 4 }, () => g.send({ question: 'warm up' })));
      await g.waitEnded(warm, 60_000);

      // Conversations in flight until the cluster serves again.
      const inFlight = keepInFlight(g, IN_FLIGHT);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      mark('losing a node');
      await cluster.loseNode(harness.workspace);
      mark('the cluster serves again');
      await inFlight.stop();
      mark(`the conversations in flight ended or waited 30 s: ${inFlight.ids.length}`);
      const before = inFlight.ids;

      await freshAnswered(g, FRESH, conversation.answer);
      mark('fresh conversations answered');
      await waitUntil(() => replica!.service.readiness().ready && harness.service.readiness().ready, 'both replicas to be ready again', 60_000);
      // A late second final message would arrive now.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const verdict: ServingVerdict = { inFlight: { answered: 0, errors: 0, lost: 0, duplicated: 0, redelivered: 0 }, fresh: FRESH };
      const ranRedelivered = new Set(capture.lines.filter((line) => line.msg === RAN_REDELIVERED).map((line) => line.id));
      for (const id of before) {
        const c = g.conversation(id);
        if (c.ends === 0) verdict.inFlight.lost++;
        else if (c.ends === 2 && ranRedelivered.has(id)) verdict.inFlight.redelivered++;
        else if (c.ends > 1) verdict.inFlight.duplicated++;
        else if (g.last(id).error || g.last(id).content !== conversation.answer) verdict.inFlight.errors++;
        else verdict.inFlight.answered++;
      }
      console.log(`[cluster] in flight: ${JSON.stringify(verdict.inFlight)}; ${FRESH} fresh answered once each; ${marks.join('; ')}`);
      expect(verdict.inFlight.duplicated, 'conversations answered twice, other than by a redelivery to another replica').toBe(0);
      expect(verdict.inFlight.answered, 'conversations in flight that were answered').toBeGreaterThan(0);
      return verdict;
    }, report);
  } finally {
    for (const s of statuses) s.stop();
    await gateway?.close().catch(() => undefined);
    await replica?.stop().catch(() => undefined);
    await replicaTransport.close().catch(() => undefined);
    await gatewayTransport.close().catch(() => undefined);
    await harness.stop();
  }
}
