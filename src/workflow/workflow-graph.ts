/**
 * A workspace's workflow as a graph: its states (the initial ones marked, each with the tools available
 * there) and its transitions (a tool whose `state` moves the conversation from a state it is available in).
 * A tool available in every state is listed once under "any state". With a request's groups and state, the
 * tools it is offered are marked, by the registry's own filter.
 */
import {
  DEFAULT_STATE,
  effectiveGroups,
  type GroupPolicy,
  normalizeRequestGroups,
  normalizeRequestState,
  type RequestGroups,
} from '../groups/index.js';
import type { ToolRegistry } from '../tools/index.js';

/** The pseudo-state of tools available in every state. */
export const ANY_STATE = '*';

export interface WorkflowState {
  readonly name: string;
  readonly initial: boolean;
  /** Tools available in this state only by name (those of every state are under ANY_STATE). */
  readonly tools: readonly string[];
}

export interface WorkflowTransition {
  readonly from: string;
  readonly to: string;
  readonly tool: string;
  readonly groups: readonly string[];
}

export interface WorkflowGraph {
  readonly workspace: string;
  readonly states: readonly WorkflowState[];
  /** Tools available in every state. */
  readonly anyState: readonly string[];
  readonly transitions: readonly WorkflowTransition[];
  /** With a request: its groups and state after defaults, and the tools it is offered. */
  readonly request?: { readonly groups: readonly string[]; readonly state: string; readonly offered: readonly string[] };
}

export function workflowGraph(
  registry: ToolRegistry,
  policy: GroupPolicy | undefined,
  request?: { groups: RequestGroups; state: string | null | undefined },
): WorkflowGraph {
  const initial = new Set(policy?.initialStates ?? [DEFAULT_STATE]);
  // State → the tools listing it, in one pass (every state named, initial ones included, even with no tool).
  const listing = new Map<string, string[]>([...initial].map((state) => [state, []]));
  for (const tool of registry.tools) {
    if (tool.states !== 'all') for (const state of tool.states) (listing.get(state) ?? listing.set(state, []).get(state)!).push(tool.name);
    if (tool.nextState !== undefined && !listing.has(tool.nextState)) listing.set(tool.nextState, []);
  }
  const states = [...listing.keys()].sort().map((name) => ({ name, initial: initial.has(name), tools: listing.get(name)! }));
  const transitions: WorkflowTransition[] = [];
  for (const tool of registry.tools) {
    if (tool.nextState === undefined) continue;
    const from = tool.states === 'all' ? [ANY_STATE] : [...tool.states].sort();
    for (const state of from) transitions.push({ from: state, to: tool.nextState, tool: tool.name, groups: tool.groups });
  }
  const graph = {
    workspace: registry.workspace,
    states,
    anyState: registry.tools.filter((t) => t.states === 'all').map((t) => t.name),
    transitions,
  };
  if (!request) return graph;
  const groups = effectiveGroups(policy, normalizeRequestGroups(request.groups), registry.knownGroups);
  const set = registry.offer({ groups, state: normalizeRequestState(request.state) }, { cache: false });
  return { ...graph, request: { groups: set.groups, state: set.state, offered: set.names } };
}
