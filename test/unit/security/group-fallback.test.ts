import { describe, expect, it } from 'vitest';
import { parseFlows } from '../../../src/config/flows.js';
import { noTelemetry } from '../../../src/observability/no-telemetry.js';
import { AnswerRecommendations, RECOMMENDATION_WINDOW_MS } from '../../../src/observability/recommendations.js';
import { withdrawnTools } from '../../../src/security/group-availability.js';
import { parsePolicy } from '../../../src/security/group-policy.js';
import { SecurityGate } from '../../../src/security/request-gate.js';
import { buildRegistry } from '../../../src/tools/registry/registry.js';
import { askOf } from '../../../src/tools/registry/selection.js';
import { withoutTools } from '../../../src/tools/registry/without-tools.js';
import { makeAgentRequest } from '../../../src/wire/index.js';

const topics = { request: 'request:tg:a:w:f', next: 'request:tg:a:w:f', response: 'response:tg:a:w:f', 'prompt-request': 'request:tg:p:w:f', 'prompt-response': 'response:tg:p:w:f' };
const flow = parseFlows('w', { f: JSON.stringify({ topics }) }).flows[0]!;
const tool = (name: string, group: string[], states?: string[]): string =>
  JSON.stringify({ type: 'knowledge-query', name, group, ...(states ? { 'applicable-states': states } : {}) });
const { registry } = buildRegistry({
  workspace: 'w',
  version: 1,
  tools: {
    t: tool('trade', ['trading']),
    r: tool('lookup', ['research'], ['undefined']),
    g: tool('search', ['general']),
    l: tool('late', ['general'], ['review']),
  },
});
const never = [{ days: [], from: '00:00', to: '24:00' }];

function gateWith(policy: object, recommendations?: AnswerRecommendations): SecurityGate {
  const gate = new SecurityGate({ policyConfigType: 'agent-group-policy', telemetry: noTelemetry, strictStates: false, ...(recommendations ? { recommendations } : {}) });
  gate.onConfig({ workspace: 'w', changedTypes: ['agent-group-policy'], snapshot: { 'agent-group-policy': { policy: JSON.stringify(policy) } }, version: 1 });
  return gate;
}
const check = (gate: SecurityGate, request: Parameters<typeof makeAgentRequest>[0]) => gate.check(flow, askOf(makeAgentRequest(request)), {}, registry);

describe('fallback groups', () => {
  const policy = {
    'allowed-groups': ['trading', 'research', 'general'],
    'fallback-groups': ['general'],
    availability: [{ groups: ['trading'], windows: never }],
  };

  it('run a request that opted in with the fallback groups when its own give it no tool', () => {
    const verdict = check(gateWith(policy), { question: 'q', group: ['trading', '+fallback'] });
    expect(verdict).toEqual({
      groups: { groups: ['general'], wildcard: false },
      withdrawnGroups: [{ group: 'trading', reason: 'time-window' }],
      fallbackGroups: ['general'],
    });
    expect(registry.offer({ groups: verdict.groups!, state: 'undefined' }).names).toEqual(['search']);
  });

  it('leave a request alone that did not opt in, or whose own groups give it a tool', () => {
    const gate = gateWith(policy);
    expect(check(gate, { question: 'q', group: ['trading'] }).fallbackGroups).toBeUndefined();
    const own = check(gate, { question: 'q', group: ['research', '+fallback'] });
    expect(own).toEqual({ groups: { groups: ['research'], wildcard: false } });
  });

  it('are decided per state: a state where the own groups offer nothing falls back', () => {
    const gate = gateWith({ 'allowed-groups': ['research', 'general'], 'fallback-groups': ['general'] });
    expect(check(gate, { question: 'q', group: ['research', '+fallback'], state: 'review' }).fallbackGroups).toEqual(['general']);
  });

  it('never use a group the policy does not allow, and say so when the policy is read', () => {
    const parsed = parsePolicy('w', { policy: JSON.stringify({ 'allowed-groups': ['research'], 'fallback-groups': ['general', 'research'] }) });
    expect(parsed.problems).toEqual([expect.stringContaining('fallback-groups names "general", which allowed-groups does not allow')]);
    const gate = gateWith({ 'allowed-groups': ['trading', 'research'], 'fallback-groups': ['general', 'research'], availability: [{ groups: ['trading'], windows: never }] });
    expect(check(gate, { question: 'q', group: ['trading', '+fallback'] }).groups).toEqual({ groups: ['research'], wildcard: false });
  });

  it('take the recommended groups of the task type with "recommended", within the policy', () => {
    const recommendations = new AnswerRecommendations({ taskTypes: () => ['finance', 'legal'] });
    recommendations.answered('w', 'finance', ['research', 'general'], ['lookup']);
    recommendations.answered('w', 'finance', ['research'], ['lookup']);
    recommendations.answered('w', 'finance', ['secret'], []);
    const gate = gateWith({ 'allowed-groups': ['trading', 'research', 'general'], 'fallback-groups': 'recommended', availability: [{ groups: ['trading'], windows: never }] }, recommendations);
    const verdict = check(gate, { question: 'q', group: ['trading', '+fallback'], task_type: 'finance' });
    expect(verdict.fallbackGroups).toEqual(['research', 'general']);
    // No conversation of the type has ended with an answer: nothing to fall back to.
    expect(check(gate, { question: 'q', group: ['trading', '+fallback'], task_type: 'legal' }).groups).toEqual({ groups: [], wildcard: false });
  });

  it('count only configured task types: made-up ones never push out the type a request falls back for', () => {
    const recommendations = new AnswerRecommendations({ taskTypes: () => ['research'] });
    recommendations.answered('w', 'research', ['general'], ['search']);
    for (let i = 0; i < 500; i++) recommendations.answered('w', `made-up-${i}`, ['general'], []);
    recommendations.answered('w', '__proto__', ['general'], []);
    expect(Object.keys(recommendations.of('w'))).toEqual(['research']);
    const gate = gateWith({ 'allowed-groups': ['trading', 'general'], 'fallback-groups': 'recommended', availability: [{ groups: ['trading'], windows: never }] }, recommendations);
    expect(check(gate, { question: 'q', group: ['trading', '+fallback'], task_type: 'research' }).fallbackGroups).toEqual(['general']);
    expect(check(gate, { question: 'q', group: ['trading', '+fallback'], task_type: 'constructor' }).groups).toEqual({ groups: [], wildcard: false });
  });

  it('forget what was answered more than a day ago', () => {
    const clock = { now: Date.UTC(2026, 0, 1, 12, 30) };
    const recommendations = new AnswerRecommendations({ taskTypes: () => ['research'], now: () => clock.now });
    recommendations.answered('w', 'research', ['old-group'], []);
    clock.now += 23 * 3_600_000;
    recommendations.answered('w', 'research', ['new-group'], []);
    expect(recommendations.of('w').research?.groups.map((g) => g.name)).toEqual(['new-group', 'old-group']);
    clock.now += RECOMMENDATION_WINDOW_MS - 22 * 3_600_000;
    expect(recommendations.of('w').research).toEqual({ answered: 1, groups: [{ name: 'new-group', answered: 1 }], tools: [] });
    clock.now += RECOMMENDATION_WINDOW_MS;
    expect(recommendations.of('w')).toEqual({});
  });

  it('keep "+fallback" an ordinary group name where the policy has no fallback groups', () => {
    const verdict = check(gateWith({ 'allowed-groups': ['research'] }), { question: 'q', group: ['research', '+fallback'] });
    expect(verdict.refusal?.deniedGroups).toEqual(['+fallback']);
  });
});

describe('single tools withdrawn by availability rules', () => {
  it('are left out of every tool set the request sees, whatever its groups', () => {
    const rules = parsePolicy('w', { policy: JSON.stringify({ 'allowed-groups': ['general'], availability: [{ tools: ['search'], windows: never }] }) }).policy!.availability;
    const withdrawn = withdrawnTools(rules, new Date());
    expect(withdrawn).toEqual([{ tool: 'search', reason: 'time-window' }]);
    const narrowed = withoutTools(registry, new Set(withdrawn.map((w) => w.tool)));
    const set = narrowed.filter(['general'], 'review');
    expect(set.names).toEqual(['late']);
    expect(set.withdrawn).toEqual(['search']);
    expect([set.has('search'), set.get('search'), set.has('late')]).toEqual([false, undefined, true]);
    expect(narrowed.filter('*', null).names).toEqual(['lookup', 'trade']);
    // The configured registry is untouched.
    expect(registry.filter(['general'], 'review').names).toEqual(['search', 'late']);
  });

  it('are reported by the gate next to the groups', () => {
    const verdict = check(gateWith({ 'allowed-groups': ['general'], availability: [{ tools: ['search'], windows: never }] }), { question: 'q', group: ['general'] });
    expect(verdict).toEqual({ groups: { groups: ['general'], wildcard: false }, withdrawnTools: [{ tool: 'search', reason: 'time-window' }] });
  });
});
