import { describe, expect, it } from 'vitest';
import { parseFlows } from '../../../src/config/flows.js';
import type { GateVerdict } from '../../../src/flow/ports.js';
import { IterationRecorder } from '../../../src/observability/iteration-recorder.js';
import { AgentMetrics } from '../../../src/observability/metrics.js';
import { IterationSigner, SIGNATURE_PROPERTY, SIGNED_AT_PROPERTY } from '../../../src/security/iteration-signature.js';
import { SecurityGate } from '../../../src/security/request-gate.js';
import { buildRegistry } from '../../../src/tools/registry/registry.js';
import { askOf } from '../../../src/groups/selection.js';
import { makeAgentRequest, type AgentRequest } from '../../../src/wire/index.js';
import { noTelemetry } from '../../../src/observability/no-telemetry.js';

const topics = { request: 'request:tg:a:w:f', next: 'request:tg:a:w:f', response: 'response:tg:a:w:f', 'prompt-request': 'request:tg:p:w:f', 'prompt-response': 'response:tg:p:w:f' };
const flow = parseFlows('w', { f: JSON.stringify({ topics }) }).flows[0]!;
const { registry } = buildRegistry({
  workspace: 'w',
  version: 1,
  tools: { a: JSON.stringify({ type: 'knowledge-query', name: 'lookup', 'applicable-states': ['analysis'], state: 'results' }) },
});

/** The gate's verdict on a request, recorded as the request handler records it (metrics, no audit). */
function checked(gate: SecurityGate, request: AgentRequest, properties: Record<string, string>, metrics?: AgentMetrics): GateVerdict {
  const ask = askOf(request);
  const verdict = gate.check(flow, ask, properties, registry);
  if (metrics) {
    const recorder = new IterationRecorder(metrics, undefined, flow, ask, 'id');
    if (verdict.unknownState !== undefined) recorder.stateUnknown(verdict.unknownState);
    if (verdict.unknownGroups) recorder.groupsUnknown(verdict.unknownGroups.groups, verdict.unknownGroups.action);
    if (verdict.refusal?.unknownGroups) recorder.groupsUnknown(verdict.refusal.unknownGroups, 'rejected');
    if (verdict.refusal) recorder.refused(verdict.refusal);
  }
  return verdict;
}

async function counter(metrics: AgentMetrics, name: string, labels: Record<string, string>): Promise<number> {
  const metric = await metrics.registry.getSingleMetric(name)?.get();
  return metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value ?? 0;
}

describe('the request gate', () => {
  it('counts a state no tool knows, and refuses it only under --strict-states', async () => {
    const metrics = new AgentMetrics('agent-manager', { defaultMetrics: false });
    metrics.registryRebuilt(registry, 0);
    const lenient = new SecurityGate({ policyConfigType: 'agent-group-policy', telemetry: noTelemetry, strictStates: false });
    const strict = new SecurityGate({ policyConfigType: 'agent-group-policy', telemetry: noTelemetry, strictStates: true });
    const unknown = makeAgentRequest({ question: 'q', state: 'nowhere' });
    expect(checked(lenient, unknown, {}, metrics)).toEqual({ unknownState: 'nowhere' });
    expect(checked(strict, unknown, {}, metrics)).toEqual({
      unknownState: 'nowhere',
      refusal: {
        kind: 'invalid-state',
        reason: 'invalid-state',
        message: 'Invalid state "nowhere": no tool of workspace "w" uses it',
      },
    });
    expect(await counter(metrics, 'tg_agent_invalid_state_transition_total', { state: 'other' })).toBe(2);
    expect(await counter(metrics, 'tg_agent_requests_refused_total', { reason: 'invalid-state' })).toBe(1);
    // Known states (including a tool's target state and "undefined") pass.
    for (const state of ['analysis', 'results', 'undefined', '']) {
      expect(checked(strict, makeAgentRequest({ question: 'q', state }), {})).toEqual({});
    }
  });

  it('adds a signature to next messages only when a key is configured', () => {
    const request = makeAgentRequest({ question: 'q', history: [{ action: 'lookup' }] });
    const unsigned = new SecurityGate({ policyConfigType: 'p', telemetry: noTelemetry, strictStates: false });
    expect(unsigned.nextProperties(flow, request, 'id')).toEqual({});
    const signer = new IterationSigner('0123456789abcdef0123');
    const signed = new SecurityGate({ policyConfigType: 'p', telemetry: noTelemetry, strictStates: false, signer });
    const properties = signed.nextProperties(flow, request, 'id');
    expect(Object.keys(properties).sort()).toEqual([SIGNATURE_PROPERTY, SIGNED_AT_PROPERTY].sort());
    expect(checked(signed, request, { id: 'id', ...properties })).toEqual({});
    // The same message again is a replay; under another id it does not verify. Both are escalation attempts.
    expect(checked(signed, request, { id: 'id', ...properties }).refusal).toMatchObject({
      kind: 'signature',
      reason: 'replayed-signature',
      escalation: 'replayed-signature',
    });
    expect(checked(signed, request, { id: 'id-2', ...properties }).refusal).toMatchObject({
      kind: 'signature',
      reason: 'bad-signature',
      escalation: 'bad-signature',
    });
  });

  it('answers a genuine next the full replay memory cannot vouch for with an error naming --replay-memory, not silence', () => {
    const request = makeAgentRequest({ question: 'q', history: [{ action: 'lookup' }] });
    const signer = new IterationSigner('0123456789abcdef0123', { replayMemory: 1_000 });
    const gate = new SecurityGate({ policyConfigType: 'p', telemetry: noTelemetry, strictStates: false, signer });
    const first = gate.nextProperties(flow, request, 'id-0');
    expect(checked(gate, request, { id: 'id-0', ...first })).toEqual({});
    // A thousand more conversations continue within the age limit: the first signature is pushed out.
    for (let i = 1; i <= 1_000; i++) {
      const properties = gate.nextProperties(flow, request, `id-${i}`);
      expect(checked(gate, request, { id: `id-${i}`, ...properties })).toEqual({});
    }
    expect(gate.rememberedSignatures).toBe(1_000);
    const refusal = checked(gate, request, { id: 'id-0', ...first }).refusal;
    expect(refusal).toMatchObject({ kind: 'signature', reason: 'unverifiable-signature' });
    expect(refusal?.message).toContain('--replay-memory');
    // Its client is answered, and it is not counted as an attempt to escalate.
    expect(refusal).not.toHaveProperty('unanswered');
    expect(refusal).not.toHaveProperty('escalation');
  });

  it('refuses a first request in a state the policy does not list, counting it as an escalation', async () => {
    const metrics = new AgentMetrics('agent-manager', { defaultMetrics: false });
    metrics.registryRebuilt(registry, 0);
    const gate = new SecurityGate({ policyConfigType: 'agent-group-policy', telemetry: noTelemetry, strictStates: false });
    const policy = { 'allowed-groups': ['default'], 'initial-states': ['undefined', 'analysis'] };
    gate.onConfig({ workspace: 'w', changedTypes: ['agent-group-policy'], snapshot: { 'agent-group-policy': { policy: JSON.stringify(policy) } }, version: 1 });
    expect(checked(gate, makeAgentRequest({ question: 'q', state: 'results' }), {}, metrics)).toEqual({
      refusal: {
        kind: 'initial-state',
        reason: 'initial-state',
        message: 'Conversation refused: it may not start in state "results"; allowed initial states: "analysis", "undefined"',
        escalation: 'initial-state',
      },
    });
    expect(checked(gate, makeAgentRequest({ question: 'q', state: 'analysis' }), {}, metrics)).toEqual({});
    expect(checked(gate, makeAgentRequest({ question: 'q' }), {}, metrics)).toEqual({});
    // A continuing iteration is not a start (under signing its state is covered by the signature).
    expect(checked(gate, makeAgentRequest({ question: 'q', state: 'results', history: [{ action: 'lookup' }] }), {}, metrics)).toEqual({});
    expect(gate.problemsOf('w')).toEqual([expect.stringMatching(/without --signing-key a client can send a made-up history/)]);
    expect(await counter(metrics, 'tg_agent_privilege_escalation_attempts_total', { reason: 'initial-state' })).toBe(1);
    expect(await counter(metrics, 'tg_agent_requests_refused_total', { reason: 'initial-state' })).toBe(1);
  });

  it('refuses groups the policy does not allow, naming each denied group, a wildcard as an escalation', async () => {
    const metrics = new AgentMetrics('agent-manager', { defaultMetrics: false });
    metrics.registryRebuilt(registry, 0);
    const gate = new SecurityGate({ policyConfigType: 'agent-group-policy', telemetry: noTelemetry, strictStates: false });
    gate.onConfig({ workspace: 'w', changedTypes: ['agent-group-policy'], snapshot: { 'agent-group-policy': { policy: JSON.stringify({ 'allowed-groups': ['default'] }) } }, version: 1 });
    expect(checked(gate, makeAgentRequest({ question: 'q', group: ['default', 'admin'] }), {}, metrics).refusal).toEqual({
      kind: 'group-policy',
      reason: 'policy-group',
      message: 'Insufficient permissions for requested tool groups: "admin"',
      deniedGroups: ['admin'],
    });
    expect(checked(gate, makeAgentRequest({ question: 'q', group: ['*'] }), {}, metrics).refusal).toMatchObject({
      reason: 'policy-wildcard',
      deniedGroups: ['*'],
      escalation: 'policy-wildcard',
    });
    expect(await counter(metrics, 'tg_agent_group_access_denied_total', { group: 'other' })).toBe(1);
    expect(await counter(metrics, 'tg_agent_group_access_denied_total', { group: '*' })).toBe(1);
    expect(await counter(metrics, 'tg_agent_privilege_escalation_attempts_total', { reason: 'policy-wildcard' })).toBe(1);
    expect(await counter(metrics, 'tg_agent_requests_refused_total', { reason: 'policy-group' })).toBe(1);
  });

  describe('a requested group no tool is in', () => {
    const withPolicy = (policy: object | undefined): SecurityGate => {
      const gate = new SecurityGate({ policyConfigType: 'agent-group-policy', telemetry: noTelemetry, strictStates: false });
      if (policy) {
        gate.onConfig({ workspace: 'w', changedTypes: ['agent-group-policy'], snapshot: { 'agent-group-policy': { policy: JSON.stringify(policy) } }, version: 1 });
      }
      return gate;
    };
    const ask = (group: string[]) => makeAgentRequest({ question: 'q', group });

    it('is warned about by default, once per name, and counted on every request', async () => {
      const metrics = new AgentMetrics('agent-manager', { defaultMetrics: false });
      const gate = withPolicy(undefined);
      expect(checked(gate, ask(['default', 'reserch']), {}, metrics)).toEqual({
        unknownGroups: { groups: ['reserch'], action: 'warned', firstSeen: ['reserch'] },
      });
      expect(checked(gate, ask(['reserch', 'zzz']), {}, metrics)).toEqual({
        unknownGroups: { groups: ['reserch', 'zzz'], action: 'warned', firstSeen: ['zzz'] },
      });
      // "default" and "*" are never unknown; a group some tool is in is not either.
      expect(checked(gate, ask(['default']), {}, metrics)).toEqual({});
      expect(checked(gate, ask(['*']), {}, metrics)).toEqual({});
      // A config change may have put a tool in the group: what is still unknown is reported again.
      gate.onConfig({ workspace: 'w', changedTypes: ['tool'], snapshot: {}, version: 2 });
      expect(checked(gate, ask(['zzz']), {}, metrics).unknownGroups?.firstSeen).toEqual(['zzz']);
      expect(await counter(metrics, 'tg_agent_unknown_group_requests_total', { action: 'warned' })).toBe(3);
      expect(await counter(metrics, 'tg_agent_requests_refused_total', { reason: 'unknown-group' })).toBe(0);
    });

    it('is let through silently under "ignore" and counted', async () => {
      const metrics = new AgentMetrics('agent-manager', { defaultMetrics: false });
      const gate = withPolicy({ 'allowed-groups': ['default', 'reserch'], 'unknown-groups': 'ignore' });
      expect(checked(gate, ask(['reserch']), {}, metrics)).toEqual({
        unknownGroups: { groups: ['reserch'], action: 'ignored', firstSeen: [] },
      });
      expect(await counter(metrics, 'tg_agent_unknown_group_requests_total', { action: 'ignored' })).toBe(1);
    });

    it('is refused under "reject" with an error naming it and the known groups, never as an escalation', async () => {
      const metrics = new AgentMetrics('agent-manager', { defaultMetrics: false });
      const gate = withPolicy({ 'allowed-groups': ['default', 'reserch', 'x'], 'unknown-groups': 'reject' });
      expect(checked(gate, ask(['reserch', 'x']), {}, metrics).refusal).toEqual({
        kind: 'unknown-group',
        reason: 'unknown-group',
        message: 'Unknown tool group(s) "reserch", "x": no tool of workspace "w" is in them (known groups: "default")',
        unknownGroups: ['reserch', 'x'],
      });
      // The policy's own refusal comes first for a group it does not allow.
      expect(checked(gate, ask(['admin']), {}, metrics).refusal?.kind).toBe('group-policy');
      expect(await counter(metrics, 'tg_agent_unknown_group_requests_total', { action: 'rejected' })).toBe(1);
      expect(await counter(metrics, 'tg_agent_requests_refused_total', { reason: 'unknown-group' })).toBe(1);
      expect(await counter(metrics, 'tg_agent_privilege_escalation_attempts_total', {})).toBe(0);
    });

    it('refuses a policy whose unknown-groups is not one of the three modes, naming the field', () => {
      const gate = withPolicy({ 'allowed-groups': ['default'], 'unknown-groups': 'loud' });
      expect(gate.problemsOf('w')).toEqual([expect.stringMatching(/field "unknown-groups".*every group is refused/)]);
    });
  });
});
