/**
 * Topic moves on one broker, under load: while a gateway keeps conversations going, every topic a conversation
 * crosses (the agent's request and response, the prompt's and the MCP tool's) is unloaded through the broker's
 * admin API, one after another, then the namespaces holding them, every bundle at once, as a load manager moves
 * them. Each unload closes the topic: its producers and consumers look it up again and reconnect.
 *
 * What must hold on each Pulsar transport: the agents never drop what the broker delivered to them (every
 * conversation an agent began, it ended: an answer, or an error once a reply that the moving topic dropped was
 * waited for); no conversation ends twice; fresh conversations after the moves are all answered. A conversation
 * the gateway never heard the end of is one the broker dropped on a non-persistent topic whose subscription was
 * away (its request before any agent saw it, or the agent's final message): the test counts them. On native
 * they are rare (a publisher waits 3 s after its own reconnect, and the subscriber is usually back by then), on
 * WebSocket more common (the broker's WebSocket service reconnects behind the socket, which no client sees).
 */
import { pino } from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { agentFlowTopics } from '../../dev/flow-config.js';
import { unloadNamespace, unloadTopic } from '../../dev/pulsar-unload.js';
import { queueToTopic, splitPulsarTopic } from '../../src/bus/topics.js';
import { startAgentHarness, waitUntil } from '../support/agent-harness.js';
import { startGatewayClient } from '../support/gateway-client.js';
import { freshAnswered, keepInFlight, lookupConversation } from '../support/conversations-in-flight.js';
import { capturingLogger } from '../support/log-capture.js';
import { createTestTransport, testTransports } from '../support/transports.js';

const IN_FLIGHT = 8;
const FRESH = 16;
const UNLOAD_GAP_MS = 1000;
/** How long the conversations an agent began may take to end after the moves (see where it is used). */
const ENDED_WAIT_MS = 120_000;
const CONVERSATION_QUEUES = ['request', 'response', 'prompt-request', 'prompt-response', 'mcp-tool-request', 'mcp-tool-response'];

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Each iteration's `next` request goes on the bus on native (`--next-on-bus`, as TrustGraph's agent sends it, and as
 * the harness runs by default), and stays on the replica on WebSocket (the agent's default). On WebSocket the
 * broker's WebSocket service reconnects its own producer and consumer behind our open sockets after an unload, and
 * in a window of about two seconds it had its producer on the reloaded request topic before its consumer: three
 * `next` requests the broker acknowledged in one millisecond were never delivered (traced on 2026-12-07 with the
 * agent's log; no socket of the agent closed, no send unacknowledged), and their conversations never ended. No
 * WebSocket client can see that window; a `next` kept on the replica never crosses it. docs/reliability.md, Topic
 * moves on one broker, says what an operator who turns `--next-on-bus` on with the WebSocket transport risks.
 */
const nextOnBus = (kind: string): boolean => kind !== 'websocket';

describe.each(testTransports())('topics unloaded on one broker under load [%s]', (kind) => {
  it('every conversation an agent began ends, none twice, fresh ones are answered', async () => {
    const adminUrl = inject('pulsarWebServiceUrl');
    const capture = capturingLogger();
    const conversation = lookupConversation('moved');
    const broker = { serviceUrl: inject('pulsarServiceUrl'), webSocketUrl: inject('pulsarWebSocketUrl') };
    const harness = await startAgentHarness({
      transport: kind,
      ...broker,
      logger: capture.logger,
      // As a process runs it, with the audit lines that say what each iteration did.
      app: {},
      script: conversation.script,
      tools: conversation.tools,
      mcpTools: conversation.mcpTools,
      // A reply the moving topic dropped ends its call within seconds, not TrustGraph's ten minutes.
      settings: { concurrency: 16, requestTimeoutSeconds: 10, nextOnBus: nextOnBus(kind) },
    });
    const gatewayTransport = createTestTransport(kind, { ...broker, logger: pino({ level: 'silent' }) });
    const gateway = await startGatewayClient({ transport: gatewayTransport, workspace: harness.workspace });
    try {
      const g = gateway;
      const warm = await Promise.all(Array.from({ length: 4 }, () => g.send({ question: 'warm up' })));
      await g.waitEnded(warm, 60_000);

      // Conversations in flight until the moves are done.
      const inFlight = keepInFlight(g, IN_FLIGHT);
      await sleep(2000);
      const topics = CONVERSATION_QUEUES.map((queue) => queueToTopic(agentFlowTopics(harness.workspace, 'default')[queue]!));
      for (const topic of topics) {
        await unloadTopic(adminUrl, topic);
        await sleep(UNLOAD_GAP_MS);
      }
      for (const namespace of new Set(topics.map((topic) => `${splitPulsarTopic(topic).tenant}/${splitPulsarTopic(topic).namespace}`))) {
        await unloadNamespace(adminUrl, namespace);
        await sleep(UNLOAD_GAP_MS);
      }
      await inFlight.stop();
      const before = inFlight.ids;

      await freshAnswered(g, FRESH, conversation.answer);
      await waitUntil(() => harness.service.readiness().ready, 'the agent to be ready again', 60_000);
      // A late second final message would arrive now.
      await sleep(3000);

      const outcomesOf = (id: string): string[] => capture.auditsOf(id).map((a) => String(a.outcome));
      const ended = (id: string): boolean => outcomesOf(id).some((o) => o === 'answer' || o === 'error' || o === 'refused');
      // An iteration is audited once its final message is with the broker. On WebSocket the broker's WebSocket
      // service reconnects its own producer behind the open socket after a move, and a publish can wait on it
      // for a minute (a busy CI run saw two conversations still publishing when this was checked at once): wait
      // for every begun conversation's end, then the expectations below say which did not come.
      const endedOrUnseen = (id: string): boolean => outcomesOf(id).length === 0 || ended(id) || g.conversation(id).ends > 0;
      await waitUntil(() => before.every(endedOrUnseen), 'every conversation an agent began to end', ENDED_WAIT_MS).catch(() => undefined);
      const describeIds = (ids: readonly string[]): string => ids.slice(0, 5).map((id) => `${id}: [${outcomesOf(id).join(', ')}]`).join('; ');
      const duplicated = before.filter((id) => g.conversation(id).ends > 1);
      const lost = before.filter((id) => g.conversation(id).ends === 0);
      const begunNotEnded = before.filter((id) => outcomesOf(id).length > 0 && !ended(id) && g.conversation(id).ends === 0);
      console.log(`[${kind}] in flight during the moves: ${before.length}, lost (dropped by the broker on a moving topic): ${lost.length}`);
      expect(before.length, 'conversations in flight during the moves').toBeGreaterThan(IN_FLIGHT);
      expect(duplicated, `conversations answered twice: ${describeIds(duplicated)}`).toEqual([]);
      expect(begunNotEnded, `conversations an agent began and never ended: ${describeIds(begunNotEnded)}`).toEqual([]);
      expect(before.filter((id) => g.conversation(id).ends === 1 && !g.last(id).error).length, 'conversations in flight that were answered').toBeGreaterThan(0);
    } finally {
      await gateway.close().catch(() => undefined);
      await gatewayTransport.close().catch(() => undefined);
      await harness.stop();
    }
  }, 420_000);
});
