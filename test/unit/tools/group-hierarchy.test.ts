import { describe, expect, it } from 'vitest';
import { expandGroupHierarchy, isWithin } from '../../../src/groups/hierarchy.js';
import { checkGroups, parsePolicy, unknownGroupsOf } from '../../../src/groups/policy.js';
import { normalizeRequestGroups } from '../../../src/groups/selection.js';
import { PATTERN_IDS } from '../../../src/agent/patterns/pattern-table.js';

const known = new Set(['knowledge', 'knowledge.read', 'knowledge.read.deep', 'knowledge.write', 'knowledgebase', 'default']);

describe('group hierarchies', () => {
  it('a group is within itself and its ancestors, along dots only', () => {
    expect(isWithin('knowledge.read', 'knowledge')).toBe(true);
    expect(isWithin('knowledge', 'knowledge')).toBe(true);
    expect(isWithin('knowledge.read.deep', 'knowledge')).toBe(true);
    expect(isWithin('knowledgebase', 'knowledge')).toBe(false);
    expect(isWithin('knowledge', 'knowledge.read')).toBe(false);
    expect(isWithin('knowledge.', 'knowledge')).toBe(true);
  });

  it('widens a request to the known groups below its groups; the wildcard and leaves stay as they are', () => {
    expect(expandGroupHierarchy(normalizeRequestGroups(['knowledge.read']), known).groups).toEqual(['knowledge.read', 'knowledge.read.deep']);
    expect(expandGroupHierarchy(normalizeRequestGroups(['knowledge', 'default']), known).groups).toEqual([
      'default',
      'knowledge',
      'knowledge.read',
      'knowledge.read.deep',
      'knowledge.write',
    ]);
    const leaf = normalizeRequestGroups(['knowledge.write']);
    expect(expandGroupHierarchy(leaf, known)).toBe(leaf);
    const wildcard = normalizeRequestGroups('*');
    expect(expandGroupHierarchy(wildcard, known)).toBe(wildcard);
  });

  it('the policy allows what is below an allowed group, never what is above it; only when the workspace opts in', () => {
    const tree = parsePolicy('ws', { policy: JSON.stringify({ 'allowed-groups': ['knowledge.read'], 'group-hierarchy': true }) }, PATTERN_IDS).policy;
    expect(checkGroups(tree, normalizeRequestGroups(['knowledge.read.deep']))).toEqual({ allowed: true });
    expect(checkGroups(tree, normalizeRequestGroups(['knowledge']))).toMatchObject({ allowed: false, deniedGroups: ['knowledge'] });
    const flat = parsePolicy('ws', { policy: JSON.stringify({ 'allowed-groups': ['knowledge.read'] }) }, PATTERN_IDS).policy;
    expect(flat?.groupHierarchy).toBe(false);
    expect(checkGroups(flat, normalizeRequestGroups(['knowledge.read.deep']))).toMatchObject({ allowed: false });
  });

  it('a group with known groups below it is not unknown under the hierarchy', () => {
    const requested = normalizeRequestGroups(['knowledge.read', 'nowhere']);
    const leavesOnly = new Set(['knowledge.read.deep']);
    expect(unknownGroupsOf(requested, leavesOnly, true)).toEqual(['nowhere']);
    expect(unknownGroupsOf(requested, leavesOnly, false)).toEqual(['knowledge.read', 'nowhere']);
  });
});
