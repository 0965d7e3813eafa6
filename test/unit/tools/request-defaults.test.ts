// TG-4, TG-5, TG-15 (docs/requirements.md), design decision 3 (docs/design.md): what a request's `group` and `state` mean when absent or odd.
import { describe, expect, it } from 'vitest';
import { normalizeRequestGroups, normalizeRequestState } from '../../../src/groups/selection.js';
import { registryOf, textTool } from '../../support/registry-fixtures.js';

const { registry } = registryOf({
  a: textTool('in_default'),
  b: textTool('in_finance', { group: ['finance'] }),
  c: textTool('in_both', { group: ['default', 'finance'] }),
  d: textTool('in_no_group', { group: [] }),
});

describe('request groups', () => {
  it('absent or null group means ["default"]', () => {
    expect(registry.filter(undefined, undefined).names).toEqual(['in_default', 'in_both']);
    expect(registry.filter(null, null).names).toEqual(['in_default', 'in_both']);
    expect(registry.filter(null, null).groups).toEqual(['default']);
  });

  it('an empty list means no tools at all, every tool filtered out by group', () => {
    const set = registry.filter([], 'undefined');
    expect(set.tools).toEqual([]);
    expect(set.names).toEqual([]);
    expect(set.filteredByGroup).toEqual(['in_default', 'in_finance', 'in_both', 'in_no_group']);
    expect(set.filteredByState).toEqual([]);
  });

  it('a bare string is a one-element list (TrustGraph would treat it as a set of characters)', () => {
    expect(registry.filter('finance', null).names).toEqual(['in_finance', 'in_both']);
    expect(registry.filter('finance', null).groups).toEqual(['finance']);
  });

  it('"*" asks for every group, including tools with group []', () => {
    expect(registry.filter(['*'], null).names).toEqual(['in_default', 'in_finance', 'in_both', 'in_no_group']);
    expect(registry.filter('*', null).wildcard).toBe(true);
  });

  it('"*" next to other groups still means every group', () => {
    const set = registry.filter(['finance', '*'], null);
    expect(set.names).toHaveLength(4);
    expect(set.groups).toEqual(['*']);
  });

  it('groups no tool uses give no tools', () => {
    expect(registry.filter(['unknown'], null).names).toEqual([]);
  });

  it('ignores non-string entries that slipped through decoding', () => {
    expect(normalizeRequestGroups(['finance', 3, null] as unknown as string[])).toEqual({ groups: ['finance'], wildcard: false });
  });

  it('sorts and deduplicates the requested groups', () => {
    expect(normalizeRequestGroups(['b', 'a', 'b']).groups).toEqual(['a', 'b']);
    expect(normalizeRequestGroups(['c', 'b', 'c', 'a', 'b']).groups).toEqual(['a', 'b', 'c']);
  });

  it('handles long group lists the same way', () => {
    const many = Array.from({ length: 40 }, (_, i) => `g${String(i % 25).padStart(2, '0')}`).reverse();
    expect(normalizeRequestGroups(many).groups).toEqual(Array.from({ length: 25 }, (_, i) => `g${String(i).padStart(2, '0')}`));
    expect(normalizeRequestGroups([...many, '*']).wildcard).toBe(true);
  });
});

describe('request state', () => {
  const { registry: stateful } = registryOf({
    a: textTool('start_only', { 'applicable-states': ['undefined'] }),
    b: textTool('later_only', { 'applicable-states': ['later'] }),
  });

  it('null, absent and "" all mean "undefined"', () => {
    for (const state of [null, undefined, '']) {
      const set = stateful.filter(null, state);
      expect(set.state).toBe('undefined');
      expect(set.names).toEqual(['start_only']);
    }
    expect(normalizeRequestState('')).toBe('undefined');
  });

  it('a named state selects the tools offered in it', () => {
    expect(stateful.filter(null, 'later').names).toEqual(['later_only']);
  });

  it('a state no tool knows offers only the every-state tools', () => {
    expect(stateful.filter(null, 'nowhere').names).toEqual([]);
    expect(registry.filter(null, 'nowhere').names).toEqual(['in_default', 'in_both']);
  });
});
