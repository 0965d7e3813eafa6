/**
 * The supervisor pattern end to end on the real broker, with a scripted model behind the prompt stand-in:
 * decomposition, one ReAct subagent per goal, the fan-in on the aggregation topic (Key_Shared, keyed by
 * correlation id), findings and the synthesis. Also: the meta-router choosing supervisor; subagents served by
 * two agent replicas on one subscription (aggregated once, answered once); with signing, a subagent
 * request asking for more groups than its parent refused before it runs; and clients that claim to be
 * subagents of fan-outs nobody started (or that already ended) each get exactly one error, within the bound.
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { AgentService } from '../../src/service.js';
import type { IncomingMessage, SubscribeOptions, Transport } from '../../src/bus/transport.js';
import { agentRequestCodec, makeAgentRequest, makeAgentStep, type AgentResponse } from '../../src/wire/index.js';
import { ORPHAN_GRACE_MS } from '../../src/flow/fan-in-consumer.js';
import type { PromptScript, PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import { startAgentHarness, type AgentHarness, type AgentHarnessOptions } from '../support/agent-harness.js';
import { brokerUrls } from '../support/transport-contract.js';
import { createTestTransport, testTransports } from '../support/transports.js';
import { responsesToRefused } from '../support/no-reply.js';
import { startGatewayClient } from '../support/gateway-client.js';
import { noTelemetry } from '../../src/observability/no-telemetry.js';

const USAGE = { in_token: 13, out_token: 5, model: 'scripted-model' };
const GOALS = ['What is a pulsar?', 'What is a quasar?', 'What is a magnetar?', 'What is a blazar?'];

function shape(responses: readonly AgentResponse[]): string[] {
  return responses.map((r) => {
    if (r.message_type !== 'explain') return r.end_of_dialog ? `${r.message_type}(eod)` : r.message_type;
    return `explain:${(r.explain_id ?? '').replace(/^urn:trustgraph:agent:[^/]+\/?/, '') || 'session'}`;
  });
}

function auditLogger() {
  const audits: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line.trim()) continue;
        const parsed = JSON.parse(line) as Record<string, unknown>;
        if (parsed.audit === 'agent-iteration') audits.push(parsed);
      }
      callback();
    },
  });
  return { logger: pino({ level: 'info' }, stream), audits };
}

/** Wrap an agent's transport to count the subagent messages its request consumers take. */
function countingSubagentMessages() {
  let taken = 0;
  const wrap = (transport: Transport): Transport => {
    const subscribe = (options: SubscribeOptions) =>
      transport.subscribe({
        ...options,
        handler: (message: IncomingMessage) => {
          if (options.subscription.endsWith('--request') && agentRequestCodec.decode(message.payload).correlation_id !== '') taken++;
          return options.handler(message);
        },
      });
    return new Proxy(transport, {
      get(target, property) {
        if (property === 'subscribe') return subscribe;
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  };
  return { wrap, count: () => taken };
}

/** Subagents answer at once, naming their goal. */
const answerGoal: PromptScript = (terms: PromptTerms) => `Thought: I know this\nFinal Answer: answer to ${String(terms.question)}`;
const synthesise: PromptScript = (terms: PromptTerms) =>
  `Synthesis: ${(terms.results as { goal: string; result: string }[]).map((r) => `${r.goal} => ${r.result}`).join(' | ')}`;

describe.each(testTransports())('supervisor pattern [%s]', (transportKind) => {
  const started: { stop(): Promise<unknown> }[] = [];
  afterEach(async () => {
    await Promise.allSettled(started.splice(0).reverse().map((s) => s.stop()));
  });

  async function start(goals: readonly string[], options: Partial<AgentHarnessOptions> = {}): Promise<AgentHarness> {
    const harness = await startAgentHarness({
      transport: transportKind,
      webSocketUrl: inject('pulsarWebSocketUrl'),
      promptUsage: USAGE,
      script: answerGoal,
      templates: { 'supervisor-decompose': () => ({ object: goals }), 'supervisor-synthesise': synthesise },
      ...options,
    });
    started.push(harness);
    return harness;
  }

  it('decomposes, fans out one subagent per goal, aggregates their answers and synthesises, as TrustGraph does', async () => {
    const h = await start(GOALS.slice(0, 2));
    const result = await h.ask(
      { question: 'Tell me about pulsars and quasars.', group: ['default'], pattern: 'supervisor', session_id: 'sup-1', conversation_id: 'conv-9' },
      { timeoutMs: 60_000 },
    );
    const s = shape(result.responses);
    expect(s.slice(0, 4)).toEqual(['explain:pattern-decision', 'explain:session', 'thought', 'explain:decompose']);
    expect(s.slice(-5)).toEqual(['explain:finding/0', 'explain:finding/1', 'thought', 'explain:synthesis', 'answer(eod)']);
    // Each subagent: its pattern decision, session, thought and conclusion — and no answer of its own.
    expect(s.filter((x) => x === 'explain:final')).toHaveLength(2);
    expect(s.filter((x) => x === 'answer(eod)')).toHaveLength(1);
    expect(result.responses[2]!.content).toBe("Decomposed into 2 sub-goals: ['What is a pulsar?', 'What is a quasar?']");
    expect(result.last.message_id).toBe('urn:trustgraph:agent:sup-1/synthesis');
    expect(result.answer).toMatch(/^Synthesis: /);
    for (const goal of GOALS.slice(0, 2)) expect(result.answer).toContain(`${goal} => answer to ${goal}`);
    expect([result.last.in_token, result.last.out_token, result.last.model]).toEqual([13, 5, 'scripted-model']);

    // The decomposition's explain names the goals; the subagents' sessions derive from it.
    const decomposition = result.responses[3]!.explain_triples.map((t) => t.o?.value).filter(Boolean);
    expect(decomposition).toEqual(expect.arrayContaining(GOALS.slice(0, 2)));

    // On the request topic: two subagent requests, two completions, one synthesis request.
    const subagents = result.nextRequests.filter((r) => r.correlation_id !== '' && r.history.length === 0);
    expect(subagents.map((r) => r.subagent_goal).sort()).toEqual([...GOALS.slice(0, 2)].sort());
    const correlation = subagents[0]!.correlation_id;
    for (const sub of subagents) {
      expect(sub).toMatchObject({ pattern: 'react', state: '', streaming: false, correlation_id: correlation, parent_session_id: 'sup-1', expected_siblings: 2, conversation_id: 'conv-9' });
      expect(sub.group).toEqual(['default']);
    }
    const completions = result.nextRequests.filter((r) => r.history.some((step) => step.step_type === 'subagent-completion'));
    expect(completions).toHaveLength(2);
    const synthesis = result.nextRequests.filter((r) => r.history.some((step) => step.step_type === 'synthesise'));
    expect(synthesis).toHaveLength(1);
    expect(synthesis[0]).toMatchObject({ pattern: 'supervisor', session_id: 'sup-1', correlation_id: '', expected_siblings: 0 });
    expect(synthesis[0]!.history.at(-1)!.subagent_results).toEqual(Object.fromEntries(GOALS.slice(0, 2).map((g) => [g, `answer to ${g}`])));
    expect(h.prompt.calls.filter((c) => c.id === 'supervisor-synthesise')).toHaveLength(1);
    expect(h.prompt.calls.find((c) => c.id === 'supervisor-decompose')!.terms.max_subagents).toBe(5);
  });

  it('fans out at most max_subagents (agent-pattern config)', async () => {
    const h = await start(GOALS);
    await h.config.put(h.workspace, 'agent-pattern', 'supervisor', { name: 'supervisor', description: 'Fan out', max_subagents: 3 });
    await h.configApplied();
    const result = await h.ask({ question: 'Four things', pattern: 'supervisor', session_id: 'sup-max' }, { timeoutMs: 60_000 });
    expect(result.last.message_type).toBe('answer');
    expect(result.nextRequests.filter((r) => r.correlation_id !== '' && r.history.length === 0).map((r) => r.subagent_goal)).toEqual(GOALS.slice(0, 3));
    expect(result.nextRequests.find((r) => r.correlation_id !== '')!.expected_siblings).toBe(3);
  });

  it('is chosen by the meta-router', async () => {
    const h = await start(GOALS.slice(0, 2), {
      templates: {
        'supervisor-decompose': () => ({ object: GOALS.slice(0, 2) }),
        'supervisor-synthesise': synthesise,
        'task-type-classify': () => 'research',
        'pattern-select': () => 'supervisor',
      },
    });
    await h.config.putMany(h.workspace, [
      { type: 'agent-pattern', key: 'react', value: { name: 'react', description: 'Reason and act' } },
      { type: 'agent-pattern', key: 'supervisor', value: { name: 'supervisor', description: 'Fan out' } },
      { type: 'agent-task-type', key: 'general', value: { name: 'general', description: 'General' } },
      { type: 'agent-task-type', key: 'research', value: { name: 'research', description: 'Research', valid_patterns: ['react', 'supervisor'], framing: 'Be thorough.' } },
    ]);
    await h.configApplied();
    const result = await h.ask({ question: 'Research pulsars and quasars', session_id: 'sup-routed' }, { timeoutMs: 60_000 });
    const decision = result.responses[0]!.explain_triples.map((t) => [t.p?.iri, t.o?.value ?? t.o?.iri]);
    expect(decision).toContainEqual(['https://trustgraph.ai/ns/pattern', 'supervisor']);
    expect(result.last.message_type).toBe('answer');
    expect(h.prompt.calls.find((c) => c.id === 'supervisor-decompose')!.terms.framing).toBe('Be thorough.');
    const subagent = result.nextRequests.find((r) => r.correlation_id !== '')!;
    expect([subagent.task_type, subagent.framing]).toEqual(['research', 'Be thorough.']);
  });

  it('aggregates once and answers once when two replicas serve the subagents', async () => {
    const first = countingSubagentMessages();
    const h = await start(GOALS, { wrapAgentTransport: first.wrap, settings: { requestConsumers: 1, concurrency: 1 } });
    const second = countingSubagentMessages();
    const { serviceUrl } = transportKind === 'native' ? brokerUrls() : { serviceUrl: '' };
    const logger = pino({ level: 'silent' });
    const replicaTransport = createTestTransport(transportKind, { webSocketUrl: inject('pulsarWebSocketUrl'), serviceUrl, logger });
    const replica = new AgentService(h.settings, second.wrap(replicaTransport), logger, { telemetry: noTelemetry });
    started.push({ stop: async () => { await replica.stop(2_000).catch(() => undefined); await replicaTransport.close(); } });
    await replica.start();
    await h.waitFor(() => replica.readiness().ready, 'the second replica to be ready');

    const result = await h.ask({ question: 'Four things', pattern: 'supervisor', session_id: 'sup-two' }, { timeoutMs: 90_000, settleMs: 1_000 });
    expect(result.responses.filter((r) => r.end_of_dialog)).toHaveLength(1);
    expect(result.last.message_type).toBe('answer');
    for (const goal of GOALS) expect(result.answer).toContain(`${goal} => answer to ${goal}`);
    expect(h.prompt.calls.filter((c) => c.id === 'supervisor-synthesise')).toHaveLength(1);
    expect(result.responses.filter((r) => r.explain_id?.includes('/finding/'))).toHaveLength(GOALS.length);
    expect(result.nextRequests.filter((r) => r.history.some((step) => step.step_type === 'synthesise'))).toHaveLength(1);
    // Both replicas took subagent messages (requests, iterations, completions), yet one fan-in was made.
    expect(first.count()).toBeGreaterThan(0);
    expect(second.count()).toBeGreaterThan(0);
    // 4 subagent requests, 4 completions: every one was taken by exactly one replica.
    expect(first.count() + second.count()).toBe(2 * GOALS.length);
  });

  it('with signing, refuses a subagent request carrying more groups than its parent gave it, before it runs', async () => {
    const signingKey = 'supervisor-signing-key-0123456789';
    const { logger, audits } = auditLogger();
    const h = await start(GOALS.slice(0, 1), { logger, app: { signingKey } });
    const result = await h.ask({ question: 'One thing', group: ['read-only'], pattern: 'supervisor', session_id: 'sup-signed' }, { timeoutMs: 60_000 });
    expect(result.last.message_type).toBe('answer');
    const original = result.nextMessages.find((m) => m.value.correlation_id !== '' && m.value.history.length === 0)!;
    expect(original.properties['tg-agent-signature']).toBeTruthy();

    const reactCalls = () => h.prompt.calls.filter((c) => c.id === 'agent-react').length;
    const before = reactCalls();
    // The same signed subagent request, with more groups: the signature no longer matches. Refused without a
    // word (an error on its id would end whatever conversation that id names), logged and audited.
    const widened = { ...original.value, group: ['read-only', 'admin'], session_id: 'forged-sub' };
    expect(await responsesToRefused(h, () => audits, widened, { ...original.properties, id: 'forged-1' })).toEqual([]);
    // Unsigned: a subagent request is not a first request.
    expect(await responsesToRefused(h, () => audits, widened, { id: 'forged-2' })).toEqual([]);
    const reasons = audits.flatMap((a) => (a.denials as { kind: string; reason: string }[] | undefined) ?? []).map((d) => d.reason);
    expect(reasons).toEqual(expect.arrayContaining(['bad-signature', 'missing-signature']));
    expect(reactCalls()).toBe(before);
    await h.waitFor(() => audits.filter((a) => (a.denials as { kind: string }[] | undefined)?.some((d) => d.kind === 'signature')).length >= 2, 'two signature refusals audited');
  });

  it('a completion for a fan-out nobody started, or that already ended, ends its own conversation with one error', async () => {
    const h = await start(GOALS.slice(0, 1));
    const gateway = await startGatewayClient({ transport: h.transport, workspace: h.workspace });
    started.push({ stop: () => gateway.close() });
    // Each ends within the orphan grace plus delivery: a correctness bound, not a speed one.
    const bound = ORPHAN_GRACE_MS + 15_000;
    const claimed = (correlation: string, history = true) =>
      agentRequestCodec.encode(
        makeAgentRequest({
          question: 'hello',
          correlation_id: correlation,
          subagent_goal: 'a goal',
          history: history ? [makeAgentStep({ thought: 'Subagent completed', action: 'complete', observation: 'forged', step_type: 'subagent-completion' })] : [],
        }),
      );
    const errorOf = (id: string) => {
      const last = gateway.last(id);
      expect(last).toMatchObject({ message_type: 'error', end_of_dialog: true });
      return last.error?.message ?? '';
    };

    const nobody = `nobody-started-${randomUUID()}`;
    const first = await gateway.sendRaw(claimed(nobody));
    await gateway.waitEnded([first], bound);
    expect(errorOf(first)).toBe(
      `a subagent completion for correlation ${nobody} arrived, but no supervisor is waiting for it (its fan-out ended, timed out, or was never made); the conversation ends here`,
    );
    // The same completion from another conversation once that correlation ended: it once vanished without a word.
    const again = await gateway.sendRaw(claimed(nobody));
    // A client that claims to be a subagent of it: its ReAct answer goes back as a completion, rejected alike.
    const subagent = await gateway.sendRaw(claimed(nobody, false));
    await gateway.waitEnded([again, subagent], bound);
    for (const id of [again, subagent]) expect(errorOf(id)).toContain('no supervisor is waiting for it (its fan-in already ended)');

    // Two conversations' completions for one correlation at once: one waits out the grace, the other is refused.
    const shared = `shared-${randomUUID()}`;
    const pair = [await gateway.sendRaw(claimed(shared)), await gateway.sendRaw(claimed(shared))];
    await gateway.waitEnded(pair, bound);
    expect(pair.map((id) => /\(([^)]*)\)/.exec(errorOf(id))![1]).sort()).toEqual(
      ["another conversation's completions for it are already waiting", 'its fan-out ended, timed out, or was never made'],
    );

    // Nothing answered twice, even late; a genuine fan-out still aggregates.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect([first, again, subagent, ...pair].map((id) => gateway.conversation(id).ends)).toEqual([1, 1, 1, 1, 1]);
    const genuine = await h.ask({ question: 'One thing', group: ['default'], pattern: 'supervisor', session_id: 'sup-after' }, { timeoutMs: 60_000 });
    expect(genuine.answer).toBe(`Synthesis: ${GOALS[0]} => answer to ${GOALS[0]}`);
  });
});
