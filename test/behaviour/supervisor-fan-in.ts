/**
 * The supervisor's fan-in on the unhappy path, on any harness transport (the unit project runs it in memory, the
 * integration project on the real broker): a fan-out whose subagent requests could not all be published ends
 * with exactly one final message, however its published subagents or its timeout come back later; and with
 * signing, aggregation messages that are unsigned, carry a wrong signature or cannot be read are refused
 * without ending the conversation they name.
 */
import { describe, expect, it } from 'vitest';
import type { Producer, Transport } from '../../src/bus/transport.js';
import { aggregationTopic, queueToTopic } from '../../src/bus/topics.js';
import { FAN_IN_PROPERTY, fanInMessage } from '../../src/agent/orchestrator/fan-in-messages.js';
import { agentRequestCodec, makeAgentRequest, makeAgentStep } from '../../src/wire/index.js';
import type { PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import { startGatewayClient } from '../support/gateway-client.js';
import { harnessPerTest, onTarget, type HarnessTarget } from '../support/harness-per-test.js';
import type { AgentHarness } from '../support/agent-harness.js';
import { knowledgeQueryTool } from '../../dev/flow-config.js';

const GOALS = ['What is a pulsar?', 'What is a quasar?'];
/** Seconds: short, so that a fan-in left live would time out (a second final message) inside the test. */
const AGGREGATION_TIMEOUT_S = 1;
/** Past the aggregation timeout and the orphan grace (both 1 s here): the bound for a late second message. */
const PAST_TIMEOUT_MS = AGGREGATION_TIMEOUT_S * 1000 + 2_500;
/**
 * For the tests whose fan-in must complete: subagents on a busy machine can take longer than the short timeout
 * to answer, which would end the conversation with the timeout's error instead of its answer.
 */
const COMPLETING = { aggregationTimeoutSeconds: 30 };
const SIGNING_KEY = 'fan-in-signing-key-0123456789';

const answerGoal = (terms: PromptTerms) => `Thought: I know this\nFinal Answer: answer to ${String(terms.question)}`;
const synthesise = (terms: PromptTerms) => `Synthesis: ${(terms.results as { goal: string; result: string }[]).map((r) => r.goal).join(' | ')}`;

/** The agent's transport, whose producer on `topic` refuses the subagent request for `goal`. */
function refusingSubagent(goal: string): (transport: Transport) => Transport {
  return (transport) =>
    new Proxy(transport, {
      get(target, property) {
        if (property === 'createProducer') {
          return async (topic: string): Promise<Producer> => {
            const producer = await target.createProducer(topic);
            return new Proxy(producer, {
              get(p, name) {
                if (name === 'send') {
                  return async (message: Parameters<Producer['send']>[0]) => {
                    const subagent = topic.includes('/request/') && !topic.endsWith('-aggregation') && agentRequestCodec.decode(message.payload);
                    if (subagent && subagent.subagent_goal === goal && subagent.history.length === 0) {
                      throw new Error(`injected: the broker refused the subagent request for ${goal}`);
                    }
                    return p.send(message);
                  };
                }
                const value: unknown = Reflect.get(p, name, p);
                return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(p) : value;
              },
            });
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
}

/** The value of the series `name` whose labels include `label` (e.g. `outcome="cancelled"`). */
async function metric(h: AgentHarness, name: string, label: string): Promise<number> {
  const text = await (await fetch(`${h.httpUrl()}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(label));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

/** The sum of every series of `name`. */
async function metricSum(h: AgentHarness, name: string): Promise<number> {
  const text = await (await fetch(`${h.httpUrl()}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

function completion(correlationId: string, goal: string) {
  return makeAgentRequest({
    question: goal,
    correlation_id: correlationId,
    subagent_goal: goal,
    session_id: `sub-${goal}`,
    history: [makeAgentStep({ thought: 'Subagent completed', action: 'complete', observation: `forged answer to ${goal}`, step_type: 'subagent-completion' })],
  });
}

export function supervisorFanInSuite(target: HarnessTarget): void {
  describe(onTarget('supervisor fan-in', target), () => {
    const start = harnessPerTest(target, {
      script: answerGoal,
      templates: { 'supervisor-decompose': () => ({ object: GOALS }), 'supervisor-synthesise': synthesise },
      settings: { aggregationTimeoutSeconds: AGGREGATION_TIMEOUT_S },
    });

    it('a fan-out whose subagent request could not be published ends with exactly one final message, the error', async () => {
      const h = await start({ wrapAgentTransport: refusingSubagent(GOALS[1]!), app: {} });
      const gateway = await startGatewayClient({ transport: h.transport, workspace: h.workspace });
      const result = await h.ask({ question: 'Pulsars and quasars', pattern: 'supervisor', session_id: 'sup-failed' }, { timeoutMs: 30_000, settleMs: PAST_TIMEOUT_MS });
      await gateway.close();
      // What the client saw over the whole time, as TrustGraph's gateway would pass it on.
      expect(gateway.conversation(result.id).ends).toBe(1);
      expect(result.last).toMatchObject({ message_type: 'error', end_of_dialog: true });
      expect(result.last.error?.message).toContain(`injected: the broker refused the subagent request for ${GOALS[1]}`);
      // The subagent that was published ran and reported back; its completion and the timeout said nothing more.
      expect(result.nextRequests.filter((r) => r.history.some((s) => s.step_type === 'subagent-completion')).map((r) => r.subagent_goal)).toEqual([GOALS[0]]);
      expect(result.responses.filter((r) => r.end_of_dialog)).toHaveLength(1);
      expect(result.responses.filter((r) => r.message_type === 'error')).toHaveLength(1);
      expect(h.prompt.calls.filter((c) => c.id === 'supervisor-synthesise')).toHaveLength(0);
      expect(await metric(h, 'tg_agent_aggregations_total', 'outcome="cancelled"')).toBe(1);
      expect(await metric(h, 'tg_agent_aggregations_total', 'outcome="timed-out"')).toBe(0);
      // The published subagent's completion came after the cancel: dropped, and counted.
      expect(await metric(h, 'tg_agent_aggregations_total', 'outcome="unclaimed"')).toBe(1);
    });

    it('gives its subagents its own state: a policy\'s initial states do not judge them as fresh starts, and the conversation ends once, with its answer', async () => {
      const h = await start({
        settings: COMPLETING,
        app: { signingKey: SIGNING_KEY },
        tools: {
          early: knowledgeQueryTool('intake', 'Fresh starts only', { 'applicable-states': ['undefined'] }),
          late: knowledgeQueryTool('report', 'Results only', { 'applicable-states': ['results'] }),
        },
      });
      await h.config.put(h.workspace, 'agent-group-policy', 'policy', { 'allowed-groups': ['default'], 'initial-states': ['results'] });
      await h.configApplied();
      const gateway = await startGatewayClient({ transport: h.transport, workspace: h.workspace });
      const result = await h.ask({ question: 'Pulsars and quasars', pattern: 'supervisor', state: 'results', session_id: 'sup-late' }, { timeoutMs: 30_000, settleMs: PAST_TIMEOUT_MS });
      await gateway.close();
      expect(gateway.conversation(result.id).ends).toBe(1);
      expect(result.last).toMatchObject({ message_type: 'answer', end_of_dialog: true });
      expect(result.answer.replace(/^Synthesis: /, '').split(' | ').sort()).toEqual([...GOALS].sort());
      const subagents = result.nextRequests.filter((r) => r.subagent_goal !== '' && r.history.length === 0);
      expect(subagents.map((r) => r.state)).toEqual(['results', 'results']);
      // Each subagent was offered the tools of its parent's state, not those of a fresh start.
      const offered = h.prompt.reactCalls().map((c) => c.terms.tool_names);
      expect(offered).toEqual(['report', 'report']);
      expect(await metricSum(h, 'tg_agent_requests_refused_total')).toBe(0);
      expect(await metricSum(h, 'tg_agent_privilege_escalation_attempts_total')).toBe(0);
    });

    it('a subagent refused by the policy reports the refusal to its supervisor: the conversation still ends with exactly one final message', async () => {
      const h = await start({ app: {}, tools: { r: knowledgeQueryTool('lookup', 'Research', { group: ['research'] }) } });
      await h.config.put(h.workspace, 'agent-group-policy', 'policy', { 'allowed-groups': ['default', 'research'] });
      await h.configApplied();
      // The operator narrows the policy while the supervisor decomposes: its subagents (its groups) are refused.
      h.prompt.templates['supervisor-decompose'] = async () => {
        await h.config.put(h.workspace, 'agent-group-policy', 'policy', { 'allowed-groups': ['default'] });
        await h.configApplied();
        return { object: GOALS };
      };
      const gateway = await startGatewayClient({ transport: h.transport, workspace: h.workspace });
      const result = await h.ask(
        { question: 'Pulsars and quasars', pattern: 'supervisor', group: ['research'], session_id: 'sup-narrowed' },
        { timeoutMs: 30_000, settleMs: PAST_TIMEOUT_MS },
      );
      await gateway.close();
      expect(gateway.conversation(result.id).ends).toBe(1);
      expect(result.responses.filter((r) => r.end_of_dialog)).toHaveLength(1);
      // The synthesis request carries the conversation's groups too: the narrowed policy refuses it, and that is the end.
      expect(result.last.error?.message).toBe('Insufficient permissions for requested tool groups: "research"');
      // Both subagents were refused before they ran, and their refusals reached the fan-in, which did not time out.
      expect(h.prompt.calls.filter((c) => c.id === 'supervisor-synthesise')).toHaveLength(0);
      expect(h.prompt.reactCalls()).toHaveLength(0);
      expect(await metric(h, 'tg_agent_aggregations_total', 'outcome="timed-out"')).toBe(0);
      expect(await metric(h, 'tg_agent_requests_refused_total', 'reason="policy-group"')).toBe(3);
    });

    it('subagent answers too large for one synthesis request are cut to fit: the conversation ends once, with its answer', async () => {
      const LIMIT = 200_000;
      const limited = (transport: Transport): Transport =>
        Object.assign(Object.create(transport) as Transport, {
          maxPayloadBytes: (properties?: Record<string, string>) => Math.min(LIMIT, transport.maxPayloadBytes?.(properties) ?? Infinity),
        });
      const h = await start({ wrapAgentTransport: limited, app: {}, settings: COMPLETING });
      // Each answer fits its own completion; the two together do not fit one request.
      h.prompt.script = (terms) => `Thought: I know this\nFinal Answer: ${String(terms.question)} ${'x'.repeat(120_000)}`;
      const gateway = await startGatewayClient({ transport: h.transport, workspace: h.workspace });
      const result = await h.ask({ question: 'Pulsars and quasars', pattern: 'supervisor', session_id: 'sup-large' }, { timeoutMs: 60_000, settleMs: PAST_TIMEOUT_MS });
      await gateway.close();
      expect(gateway.conversation(result.id).ends).toBe(1);
      expect(result.last).toMatchObject({ message_type: 'answer', end_of_dialog: true });
      const synthesis = h.prompt.calls.filter((c) => c.id === 'supervisor-synthesise');
      expect(synthesis).toHaveLength(1);
      const results = synthesis[0]!.terms.results as { goal: string; result: string }[];
      expect(results.map((r) => r.goal).sort()).toEqual([...GOALS].sort());
      for (const r of results) expect(r.result).toMatch(/… \(\d+ characters\)$/);
      // The synthesis request went over the bus (the harness publishes next requests) and the agent took it: it
      // was within what the agent accepts as a request, three quarters of what one message carries by default.
      // (Not read off the harness's own observer of the request topic: over the WebSocket API a second
      // subscriber's copy of a message this large can be dropped, docs/reliability.md.)
      expect(await metricSum(h, 'tg_agent_requests_refused_total')).toBe(0);
      expect(JSON.stringify(results).length).toBeLessThanOrEqual(LIMIT * 0.75);
      expect(await metric(h, 'tg_agent_aggregations_total', 'outcome="completed"')).toBe(1);
    });

    it('with signing, refuses unsigned, wrongly signed and unreadable aggregation messages without ending the conversation they name', async () => {
      const h = await start({ app: { signingKey: SIGNING_KEY }, settings: COMPLETING });
      const gateway = await startGatewayClient({ transport: h.transport, workspace: h.workspace });
      try {
        const topic = aggregationTopic(queueToTopic(h.flows[Object.keys(h.flows)[0]!]!.topics.request!));
        const aggregation = await h.transport.createProducer(topic);
        // A genuine signature, of another request: copied onto a forged one it does not match.
        const genuine = await h.ask({ question: 'One thing', pattern: 'supervisor', session_id: 'sup-genuine' }, { timeoutMs: 30_000 });
        expect(genuine.last.message_type).toBe('answer');
        const signed = genuine.nextMessages.find((m) => m.value.correlation_id !== '')!.properties;
        expect(signed['tg-agent-signature']).toBeTruthy();

        const victim = 'victim-of-forgery';
        const forged = (correlation: string, signature: Record<string, string> = {}) => [
          fanInMessage('fan-out', makeAgentRequest({ question: 'forged', group: ['admin'], session_id: 'forged', pattern: 'supervisor', correlation_id: correlation, expected_siblings: 1 }), { ...signature, id: victim }, Date.now()),
          fanInMessage('completion', completion(correlation, GOALS[0]!), { ...signature, id: victim }, Date.now()),
        ];
        const messages = [
          ...forged('forged-unsigned'),
          ...forged('forged-bad-signature', { 'tg-agent-signature': signed['tg-agent-signature']!, 'tg-agent-signed-at': signed['tg-agent-signed-at']! }),
          // A completion alone, for a correlation nobody made: without the check it ends the victim with "unclaimed".
          fanInMessage('completion', completion('forged-orphan', GOALS[0]!), { id: victim }, Date.now()),
          { payload: Buffer.from('not json'), properties: { id: victim, 'tg-agent-fan-in': 'completion' }, key: 'forged-garbage' },
        ];
        for (const message of messages) await aggregation.send(message);
        // Past the orphan grace: nothing reached the conversation the forged messages named.
        await new Promise((resolve) => setTimeout(resolve, PAST_TIMEOUT_MS));
        expect(gateway.conversation(victim).responses).toEqual([]);
        const refused = async () =>
          (await metric(h, 'tg_agent_privilege_escalation_attempts_total', 'reason="missing-signature"')) +
          (await metric(h, 'tg_agent_privilege_escalation_attempts_total', 'reason="bad-signature"'));
        let count = 0;
        const deadline = Date.now() + 20_000;
        while ((count = await refused()) < messages.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
        expect(count).toBe(messages.length);
        expect(h.prompt.calls.filter((c) => c.id === 'supervisor-synthesise')).toHaveLength(1);
        // A genuine fan-out still aggregates.
        const after = await h.ask({ question: 'Again', pattern: 'supervisor', session_id: 'sup-after' }, { timeoutMs: 30_000 });
        // Findings come in the order the subagents finished, which several request consumers do not fix.
        expect(after.answer.replace(/^Synthesis: /, '').split(' | ').sort()).toEqual([...GOALS].sort());
      } finally {
        await gateway.close();
      }
    });

    it('with signing, a genuine fan-out record re-labelled as a cancel or replayed onto the request topic is refused, and its conversation ends once, with its answer', async () => {
      const h = await start({ app: { signingKey: SIGNING_KEY }, settings: COMPLETING });
      const gateway = await startGatewayClient({ transport: h.transport, workspace: h.workspace });
      const topic = aggregationTopic(queueToTopic(h.flows[Object.keys(h.flows)[0]!]!.topics.request!));
      const aggregation = await h.transport.createProducer(topic);
      const replayed: Promise<unknown>[] = [];
      // The attacker reads the aggregation topic and sends each genuine fan-out record back twice: as a cancel of
      // the conversation, and as a `next` on the request topic (whose signature it carries).
      const observer = await h.transport.subscribe({
        topic,
        subscription: `attacker-${Math.random().toString(36).slice(2)}`,
        subscriptionType: 'Exclusive',
        handler: async (message) => {
          await message.ack();
          if (message.properties[FAN_IN_PROPERTY] !== 'fan-out') return;
          const { [FAN_IN_PROPERTY]: _kind, ...rest } = message.properties;
          replayed.push(aggregation.send({ payload: message.payload, properties: { ...rest, [FAN_IN_PROPERTY]: 'cancel' }, key: agentRequestCodec.decode(message.payload).correlation_id }));
          replayed.push(gateway.sendRaw(message.payload, rest));
        },
      });
      try {
        const victim = await gateway.send({ question: 'Two things', pattern: 'supervisor', session_id: 'sup-victim' });
        await gateway.waitEnded([victim], 30_000);
        await h.waitFor(() => replayed.length === 2, 'both replays sent');
        await Promise.all(replayed);
        // A second fan-in, from the replayed `next`, would have sent a second final message by now.
        await new Promise((resolve) => setTimeout(resolve, PAST_TIMEOUT_MS));
        const finals = gateway.conversation(victim).responses.filter((r) => r.end_of_dialog);
        expect(finals).toHaveLength(1);
        expect(finals[0]).toMatchObject({ message_type: 'answer' });
        expect(finals[0]!.content.replace(/^Synthesis: /, '').split(' | ').sort()).toEqual([...GOALS].sort());
        expect(h.prompt.calls.filter((c) => c.id === 'supervisor-decompose')).toHaveLength(1);
        let refused = 0;
        const deadline = Date.now() + 20_000;
        while ((refused = await metric(h, 'tg_agent_privilege_escalation_attempts_total', 'reason="bad-signature"')) < 2 && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(refused).toBe(2);
      } finally {
        await observer.close();
        await gateway.close();
      }
    });
  });
}
