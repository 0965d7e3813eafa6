// TG-1, TG-3, TG-6 (docs/requirements.md): how a tool's groups and states meet a request, and the audit lists of what was left out.
import { describe, expect, it } from 'vitest';
import { registryOf, textTool } from '../../support/registry-fixtures.js';

describe('tool groups', () => {
  it('a tool without group is in "default" only', () => {
    const { registry } = registryOf({ a: textTool('plain') });
    expect(registry.tools[0]!.groups).toEqual(['default']);
    expect(registry.filter(['default'], null).names).toEqual(['plain']);
    expect(registry.filter(['other'], null).names).toEqual([]);
  });

  it('a tool with group [] is visible only to "*"', () => {
    const { registry } = registryOf({ a: textTool('hidden', { group: [] }) });
    expect(registry.filter(null, null).names).toEqual([]);
    expect(registry.filter(['default', 'x'], null).names).toEqual([]);
    expect(registry.filter(['*'], null).names).toEqual(['hidden']);
  });

  it('a "*" in a tool\'s groups is a literal group name, not a wildcard', () => {
    const { registry } = registryOf({ a: textTool('star_group', { group: ['*'] }) });
    expect(registry.filter(['finance'], null).names).toEqual([]);
    expect(registry.filter(['*'], null).names).toEqual(['star_group']);
  });

  it('one shared group is enough (intersection, not subset)', () => {
    const { registry } = registryOf({
      a: textTool('read', { group: ['read-only', 'knowledge'] }),
      b: textTool('write', { group: ['write', 'knowledge'] }),
      c: textTool('admin', { group: ['admin'] }),
    });
    expect(registry.filter(['knowledge'], null).names).toEqual(['read', 'write']);
    expect(registry.filter(['read-only', 'admin'], null).names).toEqual(['read', 'admin']);
    expect(registry.filter(['basic', 'text'], null).names).toEqual([]);
  });

  it('matching is case-sensitive and exact', () => {
    const { registry } = registryOf({
      a: textTool('finance', { group: ['Finance'], 'applicable-states': ['Analysis'] }),
    });
    expect(registry.filter(['finance'], 'Analysis').names).toEqual([]);
    expect(registry.filter(['Finance '], 'Analysis').names).toEqual([]);
    expect(registry.filter(['Finance'], 'analysis').names).toEqual([]);
    expect(registry.filter(['Finance'], 'Analysis').names).toEqual(['finance']);
  });
});

describe('tool states', () => {
  it('a tool without applicable-states is offered in every state', () => {
    const { registry } = registryOf({ a: textTool('always') });
    for (const state of ['undefined', 'analysis', 'anything', '*']) {
      expect(registry.filter(null, state).names).toEqual(['always']);
    }
    expect(registry.tools[0]!.states).toBe('all');
  });

  it('"*" among a tool\'s states means every state', () => {
    const { registry } = registryOf({ a: textTool('starred', { 'applicable-states': ['analysis', '*'] }) });
    expect(registry.filter(null, 'results').names).toEqual(['starred']);
    expect(registry.tools[0]!.states).toBe('all');
  });

  it('an empty applicable-states list means never offered', () => {
    const { registry } = registryOf({ a: textTool('never', { 'applicable-states': [] }) });
    expect(registry.filter(['*'], 'undefined').names).toEqual([]);
    expect(registry.filter(['*'], '*').names).toEqual([]);
  });

  it('"undefined" is an ordinary state: a tool that does not list it is not offered at the start', () => {
    const { registry } = registryOf({ a: textTool('later', { 'applicable-states': ['analysis'] }) });
    expect(registry.filter(null, null).names).toEqual([]);
  });

  it('a "*" request state is a literal state name', () => {
    const { registry } = registryOf({ a: textTool('analysis_only', { 'applicable-states': ['analysis'] }) });
    expect(registry.filter(null, '*').names).toEqual([]);
  });
});

describe('combined filtering', () => {
  const { registry } = registryOf({
    a: textTool('both_ok', { group: ['g1'], 'applicable-states': ['s1'] }),
    b: textTool('wrong_state', { group: ['g1'], 'applicable-states': ['s2'] }),
    c: textTool('wrong_group', { group: ['g2'], 'applicable-states': ['s1'] }),
    d: textTool('wrong_both', { group: ['g2'], 'applicable-states': ['s2'] }),
    e: textTool('any_state', { group: ['g1'] }),
  });

  it('offers a tool only when both the group and the state match', () => {
    expect(registry.filter(['g1'], 's1').names).toEqual(['both_ok', 'any_state']);
  });

  it('reports what was filtered out by group (checked first) and by state', () => {
    const set = registry.filter(['g1'], 's1');
    expect(set.filteredByGroup).toEqual(['wrong_group', 'wrong_both']);
    expect(set.filteredByState).toEqual(['wrong_state']);
  });

  it('the three lists partition the registry', () => {
    for (const [groups, state] of [[['g1'], 's2'], [['g2'], 's1'], [['*'], 's2'], [[], 's1']] as const) {
      const set = registry.filter(groups, state);
      const all = [...set.names, ...set.filteredByGroup, ...set.filteredByState].sort();
      expect(all).toEqual(registry.tools.map((tool) => tool.name).sort());
    }
  });

  it('has/get answer only for offered tools', () => {
    const set = registry.filter(['g1'], 's1');
    expect(set.has('both_ok')).toBe(true);
    expect(set.get('both_ok')?.key).toBe('a');
    expect(set.has('wrong_state')).toBe(false);
    expect(set.get('wrong_state')).toBeUndefined();
    expect(set.has('no_such_tool')).toBe(false);
    expect(registry.get('wrong_state')?.key).toBe('b');
  });

  it('tools come in ascending config-key order, not name order', () => {
    const { registry: ordered } = registryOf({ z: textTool('alpha'), a: textTool('zulu'), m: textTool('mike') });
    expect(ordered.tools.map((tool) => tool.key)).toEqual(['a', 'm', 'z']);
    expect(ordered.filter(null, null).names).toEqual(['zulu', 'mike', 'alpha']);
  });

  it('promptTools are the offered tools in prompt form', () => {
    const set = registry.filter(['g1'], 's1');
    expect(set.promptTools.map((tool) => tool.name)).toEqual(['both_ok', 'any_state']);
    expect(set.promptTools[0]).toEqual({
      name: 'both_ok',
      description: null,
      arguments: [{ name: 'question', type: 'string', description: 'The text prompt or question for completion', required: true }],
    });
  });
});

describe('next state (TG-7)', () => {
  const { registry } = registryOf({
    a: textTool('moves', { state: 'analysis' }),
    b: textTool('stays'),
    c: textTool('empty_state', { state: '' }),
  });
  const tool = (name: string) => registry.get(name)!;

  it('moves to the tool\'s state when it has one', () => {
    expect(registry.nextState(tool('moves'), 'undefined')).toBe('analysis');
    expect(registry.nextState(tool('moves'), 'results')).toBe('analysis');
  });

  it('keeps the current state otherwise, normalized to "undefined"', () => {
    expect(registry.nextState(tool('stays'), 'results')).toBe('results');
    expect(registry.nextState(tool('stays'), null)).toBe('undefined');
    expect(registry.nextState(tool('stays'), '')).toBe('undefined');
    expect(registry.nextState(tool('empty_state'), 'results')).toBe('results');
  });
});
