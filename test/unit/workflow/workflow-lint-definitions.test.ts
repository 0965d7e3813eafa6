// The linter's checks, written in linear time, as a property: for random tools and group policies they find
// exactly what each check's definition finds when applied directly, pair by pair (the way the checks were
// first written, in quadratic time).
import fc from 'fast-check';
import { distance } from 'fastest-levenshtein';
import { describe, expect, it } from 'vitest';
import { parsePolicy, type GroupPolicy } from '../../../src/groups/policy.js';
import { isWithin } from '../../../src/groups/hierarchy.js';
import type { ToolRegistry } from '../../../src/tools/registry/registry.js';
import { DEFAULT_STATE, WILDCARD } from '../../../src/groups/selection.js';
import type { Tool } from '../../../src/tools/tool.js';
import { lintWorkflow, type Finding } from '../../../src/workflow/workflow-lint.js';
import { PATTERN_IDS } from '../../../src/agent/patterns/pattern-table.js';
import { propertySeed } from '../../support/fast-check-seed.js';
import { registryOf } from '../../support/registry-fixtures.js';

const NAMES = ['Search', 'search', 'Draft', 'Work', 'work', 'Orphan', 'Review', 'Reset'];
const GROUPS = ['research', 'reserch', 'Research', 'writers', 'a', 'a.b', 'a.b.c', 'ab', '*', 'default'];
const STATES = ['undefined', 'analysis', 'review', 'done', 'x'];

type Key = string;
const keyOf = (f: Pick<Finding, 'severity' | 'check' | 'tools' | 'groups' | 'states'>): Key =>
  `${f.severity} ${f.check} tools=${f.tools.join('|')} groups=${f.groups.join('|')} states=${f.states.join('|')}`;

const available = (tool: Tool, state: string): boolean => tool.states === 'all' || tool.states.has(state);

/** Each check's definition, applied tool by tool, pair by pair. */
function byDefinition(registry: ToolRegistry, policy: GroupPolicy | undefined): Key[] {
  const { tools } = registry;
  const out: Key[] = [];
  const add = (severity: Finding['severity'], check: Finding['check'], involved: { tools?: string[]; groups?: string[]; states?: string[] }) =>
    out.push(keyOf({ severity, check, tools: involved.tools ?? [], groups: involved.groups ?? [], states: involved.states ?? [] }));
  const users = new Map<string, string[]>();
  for (const tool of tools) for (const group of tool.groups) users.set(group, [...(users.get(group) ?? []), tool.name]);
  for (const [group, holders] of users) {
    if (holders.length !== 1) continue;
    const near = [...users.keys()].filter(
      (other) => other !== group && users.get(other)!.length > 1 && (other.toLowerCase() === group.toLowerCase() || distance(other, group) <= 2),
    );
    if (near.length > 0) add('warning', 'group-near-miss', { tools: holders, groups: [group, ...near] });
  }
  const initial = policy?.initialStates ?? new Set([DEFAULT_STATE]);
  const reachable = new Set(initial);
  for (let grew = true; grew; ) {
    grew = false;
    for (const tool of tools) {
      if (tool.nextState === undefined || reachable.has(tool.nextState)) continue;
      if (tool.states === 'all' || [...tool.states].some((s) => reachable.has(s))) grew = Boolean(reachable.add(tool.nextState));
    }
  }
  for (const tool of tools) {
    if (tool.states !== 'all' && ![...tool.states].some((s) => reachable.has(s))) add('warning', 'unreachable-state', { tools: [tool.name], states: [...tool.states] });
  }
  const targets = [...new Set(tools.flatMap((t) => (t.nextState === undefined ? [] : [t.nextState])))];
  for (const state of targets) {
    const leaders = tools.filter((t) => t.nextState === state);
    const there = tools.filter((t) => available(t, state));
    if (there.length === 0) add('error', 'dead-end-state', { tools: leaders.map((t) => t.name), states: [state] });
    for (const leader of there.length === 0 ? [] : leaders) {
      if (leader.groups.length === 0) continue;
      if (!there.some((t) => t.groups.includes(WILDCARD) || t.groups.some((g) => leader.groups.includes(g)))) {
        add('info', 'transition-loses-groups', { tools: [leader.name], groups: [...leader.groups], states: [state] });
      }
    }
  }
  if (policy) {
    const within = (group: string, above: string) => (policy.groupHierarchy ? isWithin(group, above) : group === above);
    for (const tool of tools) {
      if (!policy.allowWildcard && !tool.groups.some((g) => [...policy.allowedGroups].some((a) => within(g, a)))) {
        add('warning', 'tool-unreachable-by-policy', { tools: [tool.name], groups: [...tool.groups] });
      }
    }
    for (const group of policy.allowedGroups) {
      if (!tools.some((t) => t.groups.some((g) => within(g, group)))) add('info', 'policy-group-unused', { groups: [group] });
    }
    const requestable = (group: string) => [...policy.allowedGroups].some((a) => within(group, a) || within(a, group));
    for (const rule of policy.availability) {
      for (const group of rule.groups) {
        if (group !== WILDCARD && requestable(group) && !tools.some((t) => t.groups.some((g) => within(g, group)))) {
          add('warning', 'availability-never-matches', { groups: [group] });
        }
      }
      for (const name of rule.tools) if (!tools.some((t) => t.name === name)) add('warning', 'availability-never-matches', { tools: [name] });
    }
  }
  const byLower = new Map<string, string[]>();
  for (const tool of tools) byLower.set(tool.name.toLowerCase(), [...(byLower.get(tool.name.toLowerCase()) ?? []), tool.name]);
  for (const names of byLower.values()) if (names.length > 1) add('warning', 'case-colliding-names', { tools: names });
  return out.sort();
}

const toolArb = fc.record(
  {
    group: fc.uniqueArray(fc.constantFrom(...GROUPS), { maxLength: 3 }),
    'applicable-states': fc.uniqueArray(fc.constantFrom(...STATES, '*'), { maxLength: 3 }),
    state: fc.constantFrom(...STATES),
  },
  { requiredKeys: [] },
);

const policyArb = fc.record(
  {
    'allowed-groups': fc.uniqueArray(fc.constantFrom(...GROUPS.filter((g) => g !== '*'), 'audit', 'A'), { maxLength: 4 }),
    'allow-wildcard': fc.boolean(),
    'initial-states': fc.uniqueArray(fc.constantFrom(...STATES), { maxLength: 2 }),
    'group-hierarchy': fc.boolean(),
    availability: fc.array(
      fc.record({
        groups: fc.uniqueArray(fc.constantFrom(...GROUPS, 'A.b', 'nope'), { maxLength: 2 }),
        tools: fc.uniqueArray(fc.constantFrom(...NAMES, 'place-order'), { maxLength: 2 }),
        windows: fc.constant([{ from: '00:00', to: '24:00' }]),
      }),
      { maxLength: 2 },
    ),
  },
  { requiredKeys: ['allowed-groups'] },
);

describe('the workflow linter', () => {
  it('finds what each check\'s definition finds, for random tools and policies', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.constantFrom(...NAMES), toolArb), { maxLength: 8, selector: ([name]) => name }),
        fc.option(policyArb, { nil: undefined }),
        (configs, policyValue) => {
          const { registry, problems } = registryOf(
            Object.fromEntries(configs.map(([name, config], i) => [`k${i}`, { type: 'text-completion', name, ...config }])),
          );
          expect(problems).toEqual([]);
          const rules = policyValue?.availability?.filter((rule) => rule.groups.length + rule.tools.length > 0);
          const policy = policyValue === undefined ? undefined : parsePolicy('w', { policy: JSON.stringify({ ...policyValue, availability: rules }) }, PATTERN_IDS).policy;
          expect(lintWorkflow(registry, policy).map(keyOf).sort()).toEqual(byDefinition(registry, policy));
        },
      ),
      { ...propertySeed('workflow linter'), numRuns: 300 },
    );
  });
});
