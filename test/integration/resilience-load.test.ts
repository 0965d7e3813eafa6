/**
 * 1 000 conversations at once against one agent with a realistic `--concurrency 16`, on the real broker:
 * half answer at once, half call an MCP tool first (two iterations, a `next` message each). Every
 * conversation must end exactly once — none lost, none answered twice (end_of_dialog counted per id) — with
 * its own answer (no cross-talk between ids), within a bound.
 *
 * TrustGraph's request and response queues are non-persistent topics, and a broker whose cores are taken
 * drops a few messages of such a burst itself (test/support/broker-drops.ts). The verdict tells those apart:
 * a conversation may miss its answer only where the broker's own counters show a dropped message on its path
 * (then it ends with the agent's request-timeout error, or not at all when its final message was the one
 * dropped), never more such conversations than drops; a second final message or another conversation's
 * content is never allowed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentHarness, type AgentHarness } from '../support/agent-harness.js';
import { mcpTool } from '../../dev/flow-config.js';
import { startGatewayClient, type GatewayClient } from '../support/gateway-client.js';
import { brokerUrls } from '../support/transport-contract.js';
import type { PromptReply, PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import { createTestTransport, testTransports } from '../support/transports.js';
import type { Transport } from '../../src/bus/transport.js';
import { explained, logLines, subscriptionStats } from '../support/failure-report.js';
import { capturingLogger } from '../support/log-capture.js';
import { brokerDrops } from '../support/broker-drops.js';
import { queueToTopic } from '../../src/bus/topics.js';
import { agentFlowTopics } from '../../dev/flow-config.js';

const { webSocketUrl, serviceUrl, webServiceUrl } = brokerUrls();

const CONVERSATIONS = 1000;
const CONCURRENCY = 16;
/** Correctness bound, not a performance goal: a conversation not ended by then is lost. */
const BOUND_MS = 150_000;

function script(terms: PromptTerms): PromptReply {
  const question = String(terms.question);
  const history = terms.history as { observation: string }[];
  const n = Number(/^conversation (\d+)$/.exec(question)?.[1] ?? -1);
  if (n % 2 === 1) return `Thought: easy\nFinal Answer: answer to ${question}`;
  if (history.length === 0) return `Thought: ask the tool\nAction: lookup\nArgs: {"n": ${n}}`;
  return `Thought: done\nFinal Answer: ${history[0]?.observation ?? ''}`;
}

function expectedAnswer(n: number): string {
  return n % 2 === 1 ? `answer to conversation ${n}` : `looked up ${n}`;
}

describe.each(testTransports())(`${CONVERSATIONS} concurrent conversations (real broker, concurrency ${CONCURRENCY}) [%s]`, (transportKind) => {
  let h: AgentHarness;
  let gateway: GatewayClient;
  let gatewayTransport: Transport | undefined;
  const logs = capturingLogger('info');

  beforeAll(async () => {
    h = await startAgentHarness({
      logger: logs.logger,
      transport: transportKind,
      webSocketUrl,
      script,
      tools: { lookup: mcpTool('lookup', 'lookup-mcp', [{ name: 'n', type: 'integer', description: 'which' }]) },
      mcpTools: { 'lookup-mcp': (params) => `looked up ${String((params as { n?: unknown }).n)}` },
      settings: { concurrency: CONCURRENCY, requestTimeoutSeconds: 60 },
    });
    // TrustGraph's gateway is a process of its own: here it has its own connection too, so the burst of its
    // thousand requests and their responses does not share the stand-ins' connection.
    gatewayTransport = createTestTransport(transportKind, { webSocketUrl, serviceUrl, logger: logs.logger.child({ side: 'gateway' }) });
    gateway = await startGatewayClient({ transport: gatewayTransport, workspace: h.workspace });
  });

  afterAll(async () => {
    await gateway?.close();
    await gatewayTransport?.close();
    await h?.stop();
  });

  it('every conversation ends exactly once, with its own answer, unless the broker dropped one of its messages', async () => {
    const ids = await Promise.all(
      Array.from({ length: CONVERSATIONS }, (_, n) => gateway.send({ question: `conversation ${n}` })),
    );
    // A conversation one of whose messages the broker dropped never ends (its final message) or ends when the
    // agent's request timeout fires: the wait runs to the bound then, and the verdict below counts it.
    await gateway.waitEnded(ids, BOUND_MS).catch((error: unknown) => console.warn(String(error)));
    // Anything late (a second end_of_dialog) would arrive now.
    await new Promise((resolve) => setTimeout(resolve, 2000));

    const verdict = await explained(
      async () => {
        const v = judge(gateway, ids, await dropsOnEachPath(h));
        if (v.drops.services + v.drops.agent > 0) console.warn(`[resilience-load ${transportKind}] the broker dropped messages:`, v);
        // Never: a second final message, an answer of another conversation, a response nobody asked for.
        expect(v.wrong).toEqual([]);
        // What the broker dropped explains every conversation that did not answer, one drop each at least.
        expect(v.timedOut.length).toBeLessThanOrEqual(v.drops.services);
        expect(v.unended.length + v.missingObservation.length).toBeLessThanOrEqual(v.drops.agent);
        return v;
      },
      async () => ({
        ...(await lostReport(h, gateway, ids)),
        'warnings and errors logged (service)': logLines(logs),
        'warnings and errors logged (pulsar-client)': logLines(logs, [], 50, 'pulsar-client'),
      }),
    );
    expect(verdict.answered).toBeGreaterThanOrEqual(CONVERSATIONS - verdict.drops.services - verdict.drops.agent);
    // No response under an id nobody asked with.
    expect([...gateway.conversations.keys()].filter((id) => !ids.includes(id))).toEqual([]);
    // The tool was called at most once per tool conversation, and by every tool conversation that answered.
    const called = h.mcp.calls.map((c) => Number((c.parameters as { n?: unknown }).n));
    expect(called.length).toBe(new Set(called).size);
    expect(verdict.answeredToolConversations.filter((n) => !called.includes(n))).toEqual([]);
    expect(h.service.limit.inFlight).toBe(0);
  }, BOUND_MS + 30_000);
});

/** Messages the broker dropped between the agent and the services, and between the gateway and the agent. */
async function dropsOnEachPath(h: AgentHarness): Promise<{ services: number; agent: number }> {
  const topics = agentFlowTopics(h.workspace, h.flow);
  const sum = async (names: string[]): Promise<number> =>
    (await Promise.all(names.map((name) => brokerDrops(webServiceUrl, queueToTopic(topics[name] ?? ''))))).reduce((a, b) => a + b, 0);
  return {
    services: await sum(['prompt-request', 'prompt-response', 'mcp-tool-request', 'mcp-tool-response']),
    agent: await sum(['request', 'response']),
  };
}

interface Verdict {
  answered: number;
  answeredToolConversations: number[];
  /** Ended with the agent's "no response to request … within" error: a service request or reply was dropped. */
  timedOut: number[];
  /** Never ended: the request or the final message was dropped. */
  unended: number[];
  /** Answered, but the tool's observation never reached the gateway. */
  missingObservation: number[];
  /** What no broker drop explains. */
  wrong: string[];
  drops: { services: number; agent: number };
}

/** The agent's error for a service request that got no reply within `requestTimeoutSeconds` (60 here). */
const TIMEOUT = /^no response to request \S+ on \S+ within 60000 ms/;

function judge(gateway: GatewayClient, ids: readonly string[], drops: Verdict['drops']): Verdict {
  const v: Verdict = { answered: 0, answeredToolConversations: [], timedOut: [], unended: [], missingObservation: [], wrong: [], drops };
  for (const [n, id] of ids.entries()) {
    const conversation = gateway.conversation(id);
    if (conversation.undecodable.length > 0) v.wrong.push(`conversation ${n}: ${conversation.undecodable.length} undecodable response(s)`);
    if (conversation.ends > 1) v.wrong.push(`conversation ${n}: ${conversation.ends} final messages`);
    if (conversation.ends === 0) {
      v.unended.push(n);
      continue;
    }
    const last = gateway.last(id);
    const observations = conversation.responses.filter((r) => r.message_type === 'observation').map((r) => r.content);
    // A dropped MCP request or reply: the agent observes its timeout as the tool's error and the model answers that.
    const toolTimedOut = n % 2 === 0 && observations.length === 1 && TIMEOUT.test(observations[0]?.replace(/^Error: /, '') ?? '');
    if (toolTimedOut && last.message_type === 'answer' && last.content === observations[0]) {
      v.timedOut.push(n);
      continue;
    }
    if (observations.some((o) => o !== `looked up ${n}`) || (n % 2 === 1 && observations.length > 0)) {
      v.wrong.push(`conversation ${n}: observations of another conversation ${JSON.stringify(observations)}`);
    }
    if (last.message_type === 'answer' && last.content === expectedAnswer(n) && last.error === null) {
      v.answered += 1;
      if (n % 2 === 0) {
        v.answeredToolConversations.push(n);
        if (observations.length === 0) v.missingObservation.push(n);
      }
    } else if (last.message_type === 'error' && TIMEOUT.test(last.error?.message ?? '')) {
      v.timedOut.push(n);
    } else {
      v.wrong.push(`conversation ${n}: ended with ${JSON.stringify({ type: last.message_type, content: last.content, error: last.error })}`);
    }
  }
  return v;
}

/**
 * Where each conversation that did not answer was lost: whether the prompt stand-in ever saw its question, and
 * the broker's counters for the prompt and MCP queues (messages in, sent to each subscription).
 */
async function lostReport(h: AgentHarness, gateway: GatewayClient, ids: readonly string[]): Promise<Record<string, string[]>> {
  const unanswered = ids.flatMap((id, n) => (gateway.conversation(id).responses.at(-1)?.message_type === 'answer' ? [] : [n]));
  const seen = (n: number): number => h.prompt.calls.filter((c) => c.terms.question === `conversation ${n}`).length;
  const received = (n: number): string =>
    gateway.conversation(ids[n] ?? '').responses.map((r) => r.message_type).join(', ') || 'nothing';
  const topics = agentFlowTopics(h.workspace, h.flow);
  const brokerView: string[] = [];
  for (const name of ['request', 'response', 'prompt-request', 'prompt-response', 'mcp-tool-request', 'mcp-tool-response']) {
    const queue = topics[name];
    if (queue) brokerView.push(...(await subscriptionStats(webServiceUrl, queueToTopic(queue))));
  }
  return {
    'unanswered conversations: prompt calls the stand-in saw for each': unanswered.map((n) => `conversation ${n} (${ids[n]}): ${seen(n)}; the gateway got ${received(n)}`),
    'prompt calls in all': [String(h.prompt.calls.length)],
    "the broker's view": brokerView,
  };
}

describe('more requests waiting for a slot than --max-queued (real broker)', () => {
  let harness: AgentHarness | undefined;
  let gateway: GatewayClient | undefined;
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));

  beforeAll(async () => {
    harness = await startAgentHarness({
      webSocketUrl,
      script: async (terms: PromptTerms) => {
        if (String(terms.question).startsWith('hold')) await held;
        return 'Thought: I can answer directly\nFinal Answer: ok';
      },
      settings: { concurrency: 1, maxQueued: 2, requestTimeoutSeconds: 120 },
    });
    gateway = await startGatewayClient({ transport: harness.transport, workspace: harness.workspace });
  }, 120_000);

  afterAll(async () => {
    release();
    await gateway?.close();
    await harness?.stop();
  }, 60_000);

  it('answers the requests over the limit at once with an "overloaded" error, and the waiting ones later', async () => {
    const h = harness as AgentHarness;
    const g = gateway as GatewayClient;
    const holding = [await g.send({ question: 'hold 0' })];
    await h.waitFor(() => h.prompt.calls.length === 1, 'the first request to take the only slot', 15_000);
    holding.push(await g.send({ question: 'hold 1' }), await g.send({ question: 'hold 2' }));
    await h.waitFor(() => h.service.limit.queued === 2, 'two requests waiting for the slot', 15_000);

    const refused = await Promise.all([0, 1, 2].map((i) => g.send({ question: `over ${i}` })));
    await g.waitEnded(refused, 15_000);
    for (const id of refused) {
      expect(g.conversation(id).ends).toBe(1);
      expect(g.last(id)).toMatchObject({ message_type: 'error', end_of_dialog: true, error: { type: 'agent-error' } });
      expect(g.last(id).error?.message).toMatch(/^the agent is overloaded: 2 requests are waiting for one of its 1 concurrency slots \(limit 2\)/);
    }
    expect(holding.every((id) => g.conversation(id).ends === 0)).toBe(true);

    release();
    await g.waitEnded(holding, 30_000);
    for (const id of holding) {
      expect(g.conversation(id).ends).toBe(1);
      expect(g.last(id)).toMatchObject({ message_type: 'answer', content: 'ok' });
    }
  }, 90_000);
});
