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
 */
import { pino } from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { TEST_RABBITMQ_MAX_MESSAGE_BYTES } from '../../dev/rabbitmq-broker.js';
import { RabbitMqTransport } from '../../src/bus/rabbitmq/rabbitmq-transport.js';
import { startAgentHarness, waitUntil } from '../support/agent-harness.js';
import { lookupConversation } from '../support/conversations-in-flight.js';
import { startFreezableProxy } from '../support/freezable-proxy.js';
import { startGatewayClient } from '../support/gateway-client.js';
import { capturingLogger } from '../support/log-capture.js';

const rabbitmqUrl = inject('rabbitmqUrl');
const REQUESTS = 12;

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
    const gatewayTransport = new RabbitMqTransport({ url: rabbitmqUrl!, maxMessageBytes: TEST_RABBITMQ_MAX_MESSAGE_BYTES, logger: pino({ level: 'silent' }) });
    const gateway = await startGatewayClient({ transport: gatewayTransport, workspace: harness.workspace });
    try {
      const warm = await Promise.all(Array.from({ length: 4 }, () => gateway.send({ question: 'warm up' })));
      await gateway.waitEnded(warm, 60_000);

      proxy.freeze();
      const ids = await Promise.all(Array.from({ length: REQUESTS }, () => gateway.send({ question: 'during the freeze' })));
      // The broker delivers them; the agent's acks go nowhere.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      proxy.cut();
      await gateway.waitEnded(ids, 90_000);
      await waitUntil(() => harness.service.readiness().ready, 'the agent to be ready again', 60_000);
      // A late second final message would arrive now.
      await new Promise((resolve) => setTimeout(resolve, 5000));
      const twice = ids.filter((id) => gateway.conversation(id).ends > 1);
      expect(twice, 'conversations that ended twice').toEqual([]);
      for (const id of ids) expect(gateway.last(id).content, `conversation ${id}`).toBe(conversation.answer);
      const left = capture.lines.filter((line) => String(line.msg).startsWith('Agent request delivered again after this replica took it'));
      expect(left.length, 'second deliveries the agent left').toBeGreaterThan(0);
    } finally {
      await gateway.close().catch(() => undefined);
      await gatewayTransport.close().catch(() => undefined);
      await harness.stop();
      await proxy.close();
    }
  }, 240_000);
});
