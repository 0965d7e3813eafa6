/**
 * The default route of a conversation's `next` requests, on any harness transport: the replica that ran an
 * iteration runs the next one itself, so nothing of a conversation in progress crosses the broker, which may drop
 * a non-persistent message. The requests are still checked as if they had come back from the bus (signature,
 * groups, state), and `--next-on-bus` restores TrustGraph's way.
 */
import { describe, expect, it } from 'vitest';
import type { PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import { harnessPerTest, onTarget, type HarnessTarget } from '../support/harness-per-test.js';
import { sample, scrape } from '../support/prometheus-text.js';
import { loadSpecExample, WORKFLOW_GROUPS, workflowScript } from '../support/spec-tools.js';

const SIGNING_KEY = 'kept-next-signing-key-0123456789';
const GOALS = ['What is a pulsar?', 'What is a quasar?'];
const answerGoal = (terms: PromptTerms) => `Thought: I know this\nFinal Answer: answer to ${String(terms.question)}`;
/** The goals in alphabetical order: subagents finish in any order, and so their results come. */
const synthesise = (terms: PromptTerms) => `Synthesis: ${(terms.results as { goal: string }[]).map((r) => r.goal).sort().join(' | ')}`;

export function keptNextSuite(target: HarnessTarget): void {
  describe(onTarget('next requests kept on the replica', target), () => {
    const start = harnessPerTest(target);
    const p = { processor: 'agent-manager' };

    it('runs the spec workflow to its answer with no next request on the bus, every iteration checked as a signed next', async () => {
      const h = await start({
        settings: { nextOnBus: false },
        app: { signingKey: SIGNING_KEY },
        tools: loadSpecExample().tool,
        script: workflowScript,
        mcpTools: { 'analysis-server': () => 'analysed', 'workflow-server': () => 'reset' },
      });
      const result = await h.ask({ question: 'Company X?', group: WORKFLOW_GROUPS, state: 'undefined' });
      expect(result.last).toMatchObject({ message_type: 'answer', end_of_dialog: true });
      expect(result.responses.filter((r) => r.end_of_dialog)).toHaveLength(1);
      expect(result.nextRequests).toEqual([]);
      // Each iteration saw the history the one before it left, read back as from the bus.
      const histories = h.prompt.calls.filter((c) => c.id === 'agent-react').map((c) => (c.terms.history as unknown[]).length);
      expect(histories).toEqual([0, 1, 2, 3]);
      const text = await scrape(h.httpUrl());
      expect(sample(text, 'tg_agent_next_messages_total', { ...p, event: 'kept' })).toBe(3);
      expect(sample(text, 'tg_agent_next_messages_total', { ...p, event: 'published' }) ?? 0).toBe(0);
      expect(sample(text, 'tg_agent_next_messages_total', { ...p, event: 'received' }) ?? 0).toBe(0);
      expect(sample(text, 'tg_agent_state_transitions_total', { ...p, tool: 'Complex Analysis Tool', from: 'analysis', to: 'results' })).toBe(1);
      expect(sample(text, 'tg_agent_privilege_escalation_attempts_total', { ...p, reason: 'bad-signature' })).toBe(0);
      const request = h.flows.default!.topics.request!;
      expect(sample(text, 'tg_consumer_processing_total', { ...p, consumer: request, status: 'ok' })).toBe(4);
    });

    it("runs a supervisor's subagents and its synthesis here, and the conversation ends once, with the synthesis", async () => {
      const h = await start({
        settings: { nextOnBus: false },
        app: {},
        script: answerGoal,
        templates: { 'supervisor-decompose': () => ({ object: GOALS }), 'supervisor-synthesise': synthesise },
      });
      const result = await h.ask({ question: 'Pulsars and quasars', pattern: 'supervisor', session_id: 'kept-sup' }, { timeoutMs: 30_000 });
      expect(result.last).toMatchObject({ message_type: 'answer', end_of_dialog: true });
      expect(result.last.content).toBe(`Synthesis: ${[...GOALS].sort().join(' | ')}`);
      expect(result.responses.filter((r) => r.end_of_dialog)).toHaveLength(1);
      expect(result.nextRequests).toEqual([]);
      const text = await scrape(h.httpUrl());
      // Two subagent requests, their two completions and the synthesis request, none through the broker.
      expect(sample(text, 'tg_agent_next_messages_total', { ...p, event: 'kept' })).toBe(5);
      expect(sample(text, 'tg_agent_next_messages_total', { ...p, event: 'published' }) ?? 0).toBe(0);
      expect(sample(text, 'tg_agent_aggregations_total', { ...p, outcome: 'completed' })).toBe(1);
    });

    it('with --next-on-bus publishes each next request for any replica, as TrustGraph does', async () => {
      const h = await start({
        settings: { nextOnBus: true },
        app: {},
        tools: loadSpecExample().tool,
        script: workflowScript,
        mcpTools: { 'analysis-server': () => 'analysed', 'workflow-server': () => 'reset' },
      });
      const result = await h.ask({ question: 'Company X?', group: WORKFLOW_GROUPS, state: 'undefined' });
      expect(result.last).toMatchObject({ message_type: 'answer', end_of_dialog: true });
      expect(result.nextRequests.map((r) => r.history.length)).toEqual([1, 2, 3]);
      const text = await scrape(h.httpUrl());
      expect(sample(text, 'tg_agent_next_messages_total', { ...p, event: 'published' })).toBe(3);
      expect(sample(text, 'tg_agent_next_messages_total', { ...p, event: 'received' })).toBe(3);
      expect(sample(text, 'tg_agent_next_messages_total', { ...p, event: 'kept' }) ?? 0).toBe(0);
    });
  });
}
