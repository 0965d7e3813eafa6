import { describe, expect, it } from 'vitest';
import { parseFlows } from '../../../src/config/flows.js';
import { AgentMetrics } from '../../../src/observability/metrics.js';
import { IterationSigner, SIGNATURE_PROPERTY, SIGNED_AT_PROPERTY } from '../../../src/security/iteration-signature.js';
import { SecurityGate } from '../../../src/security/request-gate.js';
import { buildRegistry } from '../../../src/tools/registry/registry.js';
import { makeAgentRequest } from '../../../src/wire/index.js';

const topics = { request: 'request:tg:a:w:f', next: 'request:tg:a:w:f', response: 'response:tg:a:w:f', 'prompt-request': 'request:tg:p:w:f', 'prompt-response': 'response:tg:p:w:f' };
const flow = parseFlows('w', { f: JSON.stringify({ topics }) }).flows[0]!;
const { registry } = buildRegistry({
  workspace: 'w',
  version: 1,
  tools: { a: JSON.stringify({ type: 'knowledge-query', name: 'lookup', 'applicable-states': ['analysis'], state: 'results' }) },
});

async function counter(metrics: AgentMetrics, name: string, labels: Record<string, string>): Promise<number> {
  const metric = await metrics.registry.getSingleMetric(name)?.get();
  return metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value ?? 0;
}

describe('the request gate', () => {
  it('counts a state no tool knows, and refuses it only under --strict-states', async () => {
    const metrics = new AgentMetrics('agent-manager', { defaultMetrics: false });
    metrics.registryRebuilt(registry, 0);
    const lenient = new SecurityGate({ policyConfigType: 'agent-group-policy', strictStates: false, metrics });
    const strict = new SecurityGate({ policyConfigType: 'agent-group-policy', strictStates: true, metrics });
    const unknown = makeAgentRequest({ question: 'q', state: 'nowhere' });
    expect(lenient.check(flow, unknown, {}, registry)).toBeUndefined();
    expect(strict.check(flow, unknown, {}, registry)).toEqual({
      kind: 'invalid-state',
      reason: 'invalid-state',
      message: 'Invalid state "nowhere": no tool of workspace "w" uses it',
    });
    expect(await counter(metrics, 'tg_agent_invalid_state_transition_total', { state: 'other' })).toBe(2);
    // Known states (including a tool's target state and "undefined") pass.
    for (const state of ['analysis', 'results', 'undefined', '']) {
      expect(strict.check(flow, makeAgentRequest({ question: 'q', state }), {}, registry)).toBeUndefined();
    }
  });

  it('adds a signature to next messages only when a key is configured', () => {
    const request = makeAgentRequest({ question: 'q', history: [{ action: 'lookup' }] });
    const unsigned = new SecurityGate({ policyConfigType: 'p', strictStates: false });
    expect(unsigned.nextProperties(flow, request, 'id')).toEqual({});
    const signer = new IterationSigner('0123456789abcdef0123');
    const signed = new SecurityGate({ policyConfigType: 'p', strictStates: false, signer });
    const properties = signed.nextProperties(flow, request, 'id');
    expect(Object.keys(properties).sort()).toEqual([SIGNATURE_PROPERTY, SIGNED_AT_PROPERTY].sort());
    expect(signed.check(flow, request, { id: 'id', ...properties }, registry)).toBeUndefined();
    // The same message again is a replay; under another id it does not verify.
    expect(signed.check(flow, request, { id: 'id', ...properties }, registry)).toMatchObject({ kind: 'signature', reason: 'replayed-signature' });
    expect(signed.check(flow, request, { id: 'id-2', ...properties }, registry)).toMatchObject({ kind: 'signature', reason: 'bad-signature' });
  });

  it('refuses a first request in a state the policy does not list, counting it as an escalation', async () => {
    const metrics = new AgentMetrics('agent-manager', { defaultMetrics: false });
    metrics.registryRebuilt(registry, 0);
    const gate = new SecurityGate({ policyConfigType: 'agent-group-policy', strictStates: false, metrics });
    const policy = { 'allowed-groups': ['default'], 'initial-states': ['undefined', 'analysis'] };
    gate.onConfig({ workspace: 'w', changedTypes: ['agent-group-policy'], snapshot: { 'agent-group-policy': { policy: JSON.stringify(policy) } }, version: 1 });
    expect(gate.check(flow, makeAgentRequest({ question: 'q', state: 'results' }), {}, registry)).toEqual({
      kind: 'initial-state',
      reason: 'initial-state',
      message: 'Conversation refused: it may not start in state "results"; allowed initial states: "analysis", "undefined"',
    });
    expect(gate.check(flow, makeAgentRequest({ question: 'q', state: 'analysis' }), {}, registry)).toBeUndefined();
    expect(gate.check(flow, makeAgentRequest({ question: 'q' }), {}, registry)).toBeUndefined();
    // A continuing iteration is not a start (under signing its state is covered by the signature).
    expect(gate.check(flow, makeAgentRequest({ question: 'q', state: 'results', history: [{ action: 'lookup' }] }), {}, registry)).toBeUndefined();
    expect(gate.problemsOf('w')).toEqual([expect.stringMatching(/without --signing-key a client can send a made-up history/)]);
    expect(await counter(metrics, 'tg_agent_privilege_escalation_attempts_total', { reason: 'initial-state' })).toBe(1);
    expect(await counter(metrics, 'tg_agent_requests_refused_total', { reason: 'initial-state' })).toBe(1);
  });
});
