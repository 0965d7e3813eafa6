/**
 * A RabbitMQ connection that goes while requests it delivered are being acknowledged: the agent acks a request
 * on arrival, but an ack the node never read is lost with the connection, and RabbitMQ delivers the request
 * again, marked redelivered, to whichever consumer it has: here the same replica, which is still running the
 * first delivery (its calls wait for the connection to come back). Running the second too would end the
 * conversation twice.
 *
 * The agent (and its stand-ins) reach the run's RabbitMQ through a proxy that drops what they send (acks,
 * publishes) while the broker's deliveries still arrive; then the proxy closes their connections. The gateway
 * has a connection of its own. Every conversation must end exactly once, with its answer.
 *
 * With a second replica on a connection of its own (and the stand-ins beside it, so that only the first replica's
 * connection goes), RabbitMQ gives the second deliveries to it, which never saw them: it asks the replicas whether
 * one took them (src/flow/request-claims.ts), and the first, back through the proxy, answers.
 */
import { pino, type Logger } from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { TEST_RABBITMQ_MAX_MESSAGE_BYTES } from '../../dev/rabbitmq-broker.js';
import { createAgentApp, type AgentApp } from '../../src/app.js';
import { RabbitMqTransport } from '../../src/bus/rabbitmq/rabbitmq-transport.js';
import { SettingsSchema, type Settings } from '../../src/settings.js';
import { startAgentHarness, waitUntil, type AgentHarness } from '../support/agent-harness.js';
import { lookupConversation } from '../support/conversations-in-flight.js';
import { startFreezableProxy } from '../support/freezable-proxy.js';
import { startGatewayClient } from '../support/gateway-client.js';
import { capturingLogger } from '../support/log-capture.js';

const rabbitmqUrl = inject('rabbitmqUrl');
const REQUESTS = 12;

function rabbitTransport(logger: Logger = pino({ level: 'silent' }), url = rabbitmqUrl!): RabbitMqTransport {
  return new RabbitMqTransport({ url, maxMessageBytes: TEST_RABBITMQ_MAX_MESSAGE_BYTES, logger });
}

/** A second replica of the harness's agent, on a RabbitMQ connection of its own at `url`. */
async function secondReplica(harness: AgentHarness, url: string, logger: Logger): Promise<{ app: AgentApp; transport: RabbitMqTransport }> {
  const transport = rabbitTransport(logger, url);
  const settings: Settings = Object.freeze({ ...SettingsSchema.parse({}), ...harness.settings, metricsPort: 0 });
  const app = await createAgentApp(settings, transport, logger);
  await app.start();
  await waitUntil(() => app.service.readiness().ready, 'the second replica to be ready', 60_000);
  return { app, transport };
}

type Gateway = Awaited<ReturnType<typeof startGatewayClient>>;
type Proxy = Awaited<ReturnType<typeof startFreezableProxy>>;

/**
 * Warms the agents up, then sends REQUESTS while the proxy drops what the proxied replica sends (RabbitMQ still
 * delivers to it), cuts its connection 1.5 s later, and checks that every conversation ended once, with its answer.
 */
async function sendThroughLostAcks(gateway: Gateway, proxy: Proxy, answer: string, ready: () => boolean): Promise<void> {
  const warm = await Promise.all(Array.from({ length: 4 }, () => gateway.send({ question: 'warm up' })));
  await gateway.waitEnded(warm, 60_000);

  proxy.freeze();
  const ids = await Promise.all(Array.from({ length: REQUESTS }, () => gateway.send({ question: 'during the freeze' })));
  // The broker delivers them; the proxied replica's acks go nowhere.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  proxy.cut();
  await gateway.waitEnded(ids, 90_000);
  await waitUntil(ready, 'the agents to be ready again', 60_000);
  // A late second final message would arrive now.
  await new Promise((resolve) => setTimeout(resolve, 5000));
  const twice = ids.filter((id) => gateway.conversation(id).ends > 1);
  expect(twice, 'conversations that ended twice').toEqual([]);
  for (const id of ids) expect(gateway.last(id).content, `conversation ${id}`).toBe(answer);
}

describe.skipIf(!rabbitmqUrl)('a RabbitMQ connection lost before the broker read a request\'s ack', () => {
  it('the replica running the request leaves the broker\'s second delivery of it: every conversation ends once', async () => {
    const proxy = await startFreezableProxy(Number(new URL(rabbitmqUrl!).port));
    const proxied = new URL(rabbitmqUrl!);
    proxied.port = String(proxy.port);
    const conversation = lookupConversation('once');
    const capture = capturingLogger();
    const harness = await startAgentHarness({
      transport: 'rabbitmq',
      rabbitmqUrl: proxied.toString(),
      logger: capture.logger,
      script: conversation.script,
      tools: conversation.tools,
      mcpTools: conversation.mcpTools,
      settings: { concurrency: 16, requestTimeoutSeconds: 30 },
    });
    const gatewayTransport = rabbitTransport();
    const gateway = await startGatewayClient({ transport: gatewayTransport, workspace: harness.workspace });
    try {
      await sendThroughLostAcks(gateway, proxy, conversation.answer, () => harness.service.readiness().ready);
      const left = capture.lines.filter((line) => String(line.msg).startsWith('Agent request delivered again after this replica took it'));
      expect(left.length, 'second deliveries the agent left').toBeGreaterThan(0);
    } finally {
      await gateway.close().catch(() => undefined);
      await gatewayTransport.close().catch(() => undefined);
      await harness.stop();
      await proxy.close();
    }
  }, 240_000);

  it('a second replica given the deliveries asks the replicas, and leaves each one the first took: every conversation ends once', async () => {
    const proxy = await startFreezableProxy(Number(new URL(rabbitmqUrl!).port));
    const proxied = new URL(rabbitmqUrl!);
    proxied.port = String(proxy.port);
    const conversation = lookupConversation('once');
    const capture = capturingLogger();
    // The harness's agent is replica B, on a direct connection; replica A reaches RabbitMQ through the proxy.
    const harness = await startAgentHarness({
      transport: 'rabbitmq',
      rabbitmqUrl: rabbitmqUrl!,
      logger: capture.logger.child({ replica: 'B' }) as Logger,
      script: conversation.script,
      tools: conversation.tools,
      mcpTools: conversation.mcpTools,
      settings: { concurrency: 16, requestTimeoutSeconds: 30 },
    });
    const gatewayTransport = rabbitTransport();
    let replica: { app: AgentApp; transport: RabbitMqTransport } | undefined;
    let gateway: Gateway | undefined;
    try {
      replica = await secondReplica(harness, proxied.toString(), capture.logger.child({ replica: 'A' }) as Logger);
      gateway = await startGatewayClient({ transport: gatewayTransport, workspace: harness.workspace });
      // RabbitMQ gives some to each replica; replica A's acks go nowhere.
      const a = replica.app;
      await sendThroughLostAcks(gateway, proxy, conversation.answer, () => harness.service.readiness().ready && a.service.readiness().ready);
      const left = capture.lines.filter((line) => String(line.msg).startsWith('Agent request delivered again after another replica took it'));
      expect(left.length, 'second deliveries the other replica left').toBeGreaterThan(0);
      expect(new Set(left.map((line) => line.replica)), 'the replica that left them').toEqual(new Set(['B']));
    } finally {
      await gateway?.close().catch(() => undefined);
      await gatewayTransport.close().catch(() => undefined);
      await replica?.app.stop().catch(() => undefined);
      await replica?.transport.close().catch(() => undefined);
      await harness.stop();
      await proxy.close();
    }
  }, 240_000);
});
