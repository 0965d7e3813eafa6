/**
 * withoutTools: a withdrawn tool leaves the offered set, and the narrowed set still says which tools the groups
 * and the state left out, with the same counts, first names and whole lists as the set it narrows.
 */
import { describe, expect, it } from 'vitest';
import { withoutTools } from '../../../src/tools/index.js';
import { knowledgeQueryTool } from '../../../dev/flow-config.js';
import { registryOf } from '../../support/registry-fixtures.js';

const TOOLS = {
  a: knowledgeQueryTool('a', 'x', { group: ['g'] }),
  b: knowledgeQueryTool('b', 'x', { group: ['g'] }),
  later: knowledgeQueryTool('later', 'x', { group: ['g'], 'applicable-states': ['s'] }),
  other: knowledgeQueryTool('other', 'x', { group: ['h'] }),
};

describe('withoutTools', () => {
  it('withdraws a tool and keeps what the groups and the state left out', () => {
    const { registry } = registryOf(TOOLS);
    const set = withoutTools(registry, new Set(['b'])).filter(['g'], null);
    expect(set.names).toEqual(['a']);
    expect(set.withdrawn).toEqual(['b']);
    expect(set.has('b')).toBe(false);
    expect([set.filteredByGroup, set.filteredByGroupFirst, set.filteredByGroupCount]).toEqual([['other'], ['other'], 1]);
    expect([set.filteredByState, set.filteredByStateFirst, set.filteredByStateCount]).toEqual([['later'], ['later'], 1]);
    expect([set.leftOutBy('other'), set.leftOutBy('later'), set.leftOutBy('a')]).toEqual(['group', 'state', undefined]);
  });
});
