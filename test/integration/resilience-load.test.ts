/**
 * 1 000 conversations at once against one agent with a realistic `--concurrency 16`, on the real broker:
 * half answer at once, half call an MCP tool first (two iterations, a `next` message each). Every
 * conversation must end exactly once — none lost, none answered twice (end_of_dialog counted per id) — with
 * its own answer (no cross-talk between ids), within a bound.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentHarness, type AgentHarness } from '../support/agent-harness.js';
import { mcpTool } from '../../dev/flow-config.js';
import { startGatewayClient, type GatewayClient } from '../support/gateway-client.js';
import { brokerUrls } from '../support/transport-contract.js';
import type { PromptReply, PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import { testTransports } from '../support/transports.js';

const { webSocketUrl } = brokerUrls();

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

  beforeAll(async () => {
    h = await startAgentHarness({
      transport: transportKind,
      webSocketUrl,
      script,
      tools: { lookup: mcpTool('lookup', 'lookup-mcp', [{ name: 'n', type: 'integer', description: 'which' }]) },
      mcpTools: { 'lookup-mcp': (params) => `looked up ${String((params as { n?: unknown }).n)}` },
      settings: { concurrency: CONCURRENCY, requestTimeoutSeconds: 60 },
    });
    gateway = await startGatewayClient({ transport: h.transport, workspace: h.workspace });
  });

  afterAll(async () => {
    await gateway?.close();
    await h?.stop();
  });

  it('every conversation ends exactly once, with its own answer', async () => {
    const ids = await Promise.all(
      Array.from({ length: CONVERSATIONS }, (_, n) => gateway.send({ question: `conversation ${n}` })),
    );
    await gateway.waitEnded(ids, BOUND_MS);
    // Anything late (a second end_of_dialog) would arrive now.
    await new Promise((resolve) => setTimeout(resolve, 2000));

    expect(new Set(ids).size).toBe(CONVERSATIONS);
    const ends = ids.map((id) => gateway.conversation(id).ends);
    expect(ends.filter((count) => count !== 1)).toEqual([]);
    for (const [n, id] of ids.entries()) {
      const conversation = gateway.conversation(id);
      expect(conversation.undecodable).toHaveLength(0);
      expect(gateway.last(id)).toMatchObject({ message_type: 'answer', content: expectedAnswer(n), error: null });
      // A tool conversation: thought, observation and answer of its own, nothing of another conversation's.
      const contents = conversation.responses.filter((r) => r.message_type === 'observation').map((r) => r.content);
      expect(contents).toEqual(n % 2 === 0 ? [`looked up ${n}`] : []);
    }
    // No response under an id nobody asked with.
    expect([...gateway.conversations.keys()].filter((id) => !ids.includes(id))).toEqual([]);
    // Each tool conversation called the tool exactly once.
    expect(h.mcp.calls).toHaveLength(CONVERSATIONS / 2);
    expect(h.service.limit.inFlight).toBe(0);
  }, BOUND_MS + 30_000);
});

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
