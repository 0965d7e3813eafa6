import { describe, expect, it } from 'vitest';
import { buildRegistry } from '../../../src/tools/registry/registry.js';
import { syntheticTools } from '../../../bench/support/tools.js';

describe('registry availability (the metrics hook reads it)', () => {
  it('counts, for every known group and state, what one pass over the tools counts', () => {
    const tools: Record<string, string> = {
      ...syntheticTools(300, 0, 7),
      'z-every-state': JSON.stringify({ type: 'knowledge-query', name: 'everywhere', group: ['group-01', 'group-01'], 'applicable-states': ['*'] }),
      'z-no-group': JSON.stringify({ type: 'knowledge-query', name: 'nowhere', group: [], state: 'only-a-target' }),
      'z-bad': '{"type": ',
    };
    const { registry } = buildRegistry({ workspace: 'w', tools, toolServices: {}, version: 1 });
    const groups = new Map([...registry.knownGroups].map((g) => [g, 0]));
    const listed = new Map<string, number>();
    let everyState = 0;
    for (const tool of registry.tools) {
      for (const group of tool.groups) groups.set(group, (groups.get(group) ?? 0) + 1);
      if (tool.states === 'all') everyState++;
      else for (const state of tool.states) listed.set(state, (listed.get(state) ?? 0) + 1);
    }
    const states = new Map([...registry.knownStates].map((s) => [s, everyState + (listed.get(s) ?? 0)]));
    const availability = registry.availability();
    expect(Object.fromEntries(availability.groups)).toEqual(Object.fromEntries(groups));
    expect(Object.fromEntries(availability.states)).toEqual(Object.fromEntries(states));
    expect(availability.states.get('only-a-target')).toBe(everyState);
    expect(everyState).toBeGreaterThan(0);
    expect(registry.availability()).toBe(availability);
  });
});
