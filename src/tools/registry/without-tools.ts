/**
 * A registry that offers no tool of a given set, whatever the groups and state: how the policy's availability
 * rules withdraw single tools for one request (groups/availability.ts). Every pattern asks its registry
 * for tool sets, so wrapping the request's registry once withdraws the tools everywhere: the prompt, the check
 * of the model's action, the plan's validation.
 */
import type { FilterOptions, ToolRegistry } from './registry.js';
import type { AgentAsk, RequestGroups, RequestState } from '../../groups/index.js';
import type { ToolSet } from './tool-set.js';

export function withoutTools(registry: ToolRegistry, withdrawn: ReadonlySet<string>): ToolRegistry {
  if (withdrawn.size === 0) return registry;
  const narrow = (set: ToolSet): ToolSet => (set.tools.some((tool) => withdrawn.has(tool.name)) ? narrowed(set, withdrawn) : set);
  return Object.freeze({
    ...registry,
    filter: (groups: RequestGroups, state: RequestState, options?: FilterOptions): ToolSet => narrow(registry.filter(groups, state, options)),
    offer: (ask: Pick<AgentAsk, 'groups' | 'state'>, options?: FilterOptions): ToolSet => narrow(registry.offer(ask, options)),
  });
}

function narrowed(set: ToolSet, withdrawn: ReadonlySet<string>): ToolSet {
  const tools = set.tools.filter((tool) => !withdrawn.has(tool.name));
  const has = (name: string): boolean => !withdrawn.has(name) && set.has(name);
  // Named field by field, not spread: a spread would read, and so build, the set's lazy left-out lists.
  return Object.freeze({
    workspace: set.workspace,
    version: set.version,
    groups: set.groups,
    wildcard: set.wildcard,
    state: set.state,
    get filteredByGroup(): readonly string[] {
      return set.filteredByGroup;
    },
    get filteredByState(): readonly string[] {
      return set.filteredByState;
    },
    filteredByGroupCount: set.filteredByGroupCount,
    filteredByGroupFirst: set.filteredByGroupFirst,
    filteredByStateCount: set.filteredByStateCount,
    filteredByStateFirst: set.filteredByStateFirst,
    leftOutBy: (name: string) => set.leftOutBy(name),
    tools: Object.freeze(tools),
    names: Object.freeze(tools.map((tool) => tool.name)),
    promptTools: Object.freeze(tools.map((tool) => tool.prompt)),
    withdrawn: Object.freeze(set.tools.filter((tool) => withdrawn.has(tool.name)).map((tool) => tool.name)),
    has,
    get: (name: string) => (has(name) ? set.get(name) : undefined),
  });
}
