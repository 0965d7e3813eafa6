// TG-6 (docs/requirements.md) as a property: for random tools and requests, the indexed (and cached) filter gives exactly what
// the spec's formula gives tool by tool, in config-key order, with the audit lists right.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inRequestedGroups, isToolOffered, normalizeRequestGroups, normalizeRequestState } from '../../../src/groups/selection.js';
import { registryOf } from '../../support/registry-fixtures.js';
import { propertySeed } from '../../support/fast-check-seed.js';

const GROUPS = ['default', 'a', 'b', 'c', 'A', '*'];
const STATES = ['undefined', 'x', 'y', 'X', '*', ''];

const toolArb = fc.record(
  {
    group: fc.option(fc.uniqueArray(fc.constantFrom(...GROUPS), { maxLength: 3 }), { nil: undefined }),
    'applicable-states': fc.option(fc.uniqueArray(fc.constantFrom(...STATES), { maxLength: 3 }), { nil: undefined }),
    state: fc.option(fc.constantFrom(...STATES), { nil: undefined }),
  },
  { requiredKeys: [] },
);

const requestGroupsArb = fc.oneof(
  fc.constant(null),
  fc.constant(undefined),
  fc.constantFrom(...GROUPS),
  fc.array(fc.constantFrom(...GROUPS), { maxLength: 4 }),
);
const requestStateArb = fc.oneof(fc.constant(null), fc.constant(undefined), fc.constantFrom(...STATES));

describe('filter', () => {
  it('agrees with the TG-6 formula for random tools and requests', () => {
    fc.assert(
      fc.property(
        fc.array(toolArb, { maxLength: 8 }),
        fc.array(fc.tuple(requestGroupsArb, requestStateArb), { minLength: 1, maxLength: 6 }),
        (toolConfigs, requests) => {
          const entries = Object.fromEntries(
            toolConfigs.map((config, i) => [`k${String(i).padStart(2, '0')}`, { type: 'text-completion', name: `t${i}`, ...config }]),
          );
          const { registry, problems } = registryOf(entries, {}, { cacheSize: 3 });
          expect(problems).toEqual([]);
          // Each request twice, so cache hits (and evictions, with 3 entries) are exercised too.
          for (const [groups, state] of [...requests, ...requests]) {
            const requested = normalizeRequestGroups(groups);
            const current = normalizeRequestState(state);
            const set = registry.filter(groups, state);
            const expected = registry.tools.filter((tool) => isToolOffered(tool, requested, current));
            expect(set.tools).toEqual(expected);
            expect(set.filteredByGroup).toEqual(
              registry.tools.filter((tool) => !inRequestedGroups(tool, requested)).map((tool) => tool.name),
            );
            expect(set.filteredByState).toEqual(
              registry.tools
                .filter((tool) => inRequestedGroups(tool, requested) && !isToolOffered(tool, requested, current))
                .map((tool) => tool.name),
            );
            for (const tool of registry.tools) expect(set.has(tool.name)).toBe(expected.includes(tool));
          }
        },
      ),
      { numRuns: 300, ...propertySeed('filter agrees with the TG-6 formula') },
    );
  });
});
