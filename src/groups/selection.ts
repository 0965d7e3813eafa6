/**
 * Which tools a request may use: TrustGraph's group/state semantics (docs/trustgraph-agent-notes.md §2.8, design decision 3 (docs/design.md),
 * TG-4..TG-7, docs/requirements.md), as pure functions. The registry applies the same rules through precomputed indexes;
 * `isToolOffered` is the formula itself, one tool at a time.
 */
import type { AgentRequest } from '../wire/index.js';

/** The states a tool is offered in: every state (`applicable-states` absent or holding `"*"`), or these. */
export type ToolStates = 'all' | ReadonlySet<string>;

/** What the group and state rules read of a tool (a loaded `Tool` has these fields). */
export interface GroupedTool {
  readonly groups: readonly string[];
  readonly states: ToolStates;
  readonly nextState: string | undefined;
}

/** The group a request uses when it names none, and a tool is in when it names none. */
export const DEFAULT_GROUP = 'default';
/** The state of a request that carries none (or `""`). */
export const DEFAULT_STATE = 'undefined';
/** In a request's groups: every group. In a tool's states: every state. */
export const WILDCARD = '*';

/** A request's `group` as it may arrive: a list, a bare string (wrapped), or null/absent (`["default"]`). */
export type RequestGroups = readonly string[] | string | null | undefined;
/** A request's `state`: null, absent or `""` mean `"undefined"`. */
export type RequestState = string | null | undefined;

/** A request's groups after the defaults: sorted, deduplicated; `["*"]` when `"*"` was asked for. */
export interface RequestedGroups {
  readonly groups: readonly string[];
  /** True when `"*"` was requested: every tool passes the group check, even one with `group: []`. */
  readonly wildcard: boolean;
}

const DEFAULT_REQUEST_GROUPS: RequestedGroups = Object.freeze({ groups: Object.freeze([DEFAULT_GROUP]), wildcard: false });
const WILDCARD_REQUEST_GROUPS: RequestedGroups = Object.freeze({ groups: Object.freeze([WILDCARD]), wildcard: true });

/**
 * Apply the request defaults to `group`: null/absent → `["default"]`; `[]` → no groups (no tools);
 * a bare string → a one-element list; any `"*"` → every group. Non-string entries are ignored.
 */
export function normalizeRequestGroups(requestGroups: RequestGroups): RequestedGroups {
  // Typed for callers; checked at run time too, since requests come off the wire.
  const groups: unknown = requestGroups;
  if (groups === null || groups === undefined) return DEFAULT_REQUEST_GROUPS;
  if (typeof groups === 'string') {
    return groups === WILDCARD ? WILDCARD_REQUEST_GROUPS : { groups: [groups], wildcard: false };
  }
  if (!Array.isArray(groups)) return { groups: [], wildcard: false };
  const list: readonly unknown[] = groups;
  const first = list[0];
  if (list.length === 1 && typeof first === 'string') {
    return first === WILDCARD ? WILDCARD_REQUEST_GROUPS : { groups: [first], wildcard: false };
  }
  if (list.length > 16) {
    const many = new Set<string>();
    for (const group of list) {
      if (group === WILDCARD) return WILDCARD_REQUEST_GROUPS;
      if (typeof group === 'string') many.add(group);
    }
    return { groups: [...many].sort(), wildcard: false };
  }
  // Requests name a handful of groups: an insertion sort with de-duplication beats Set + sort here,
  // and this runs on every request, cache hit or not.
  const names: string[] = [];
  for (let i = 0; i < list.length; i++) {
    const group = list[i];
    if (typeof group !== 'string') continue;
    if (group === WILDCARD) return WILDCARD_REQUEST_GROUPS;
    let at = names.length;
    while (at > 0 && names[at - 1]! > group) at--;
    if (at > 0 && names[at - 1] === group) continue;
    names.splice(at, 0, group);
  }
  return { groups: names, wildcard: false };
}

/** Apply the request default to `state`: null, absent, `""` (or a non-string) → `"undefined"`. */
export function normalizeRequestState(requestState: RequestState): string {
  const state: unknown = requestState;
  return typeof state === 'string' && state !== '' ? state : DEFAULT_STATE;
}

/**
 * One decoded request with its defaults applied, once, right after decoding: the gate, the recorder, the
 * iteration and the registry all read `groups` and `state` from here.
 */
export interface AgentAsk {
  /** The request as it arrived (its `group` and `state` are what the client sent). */
  readonly request: AgentRequest;
  readonly groups: RequestedGroups;
  /** The state after the default (`"undefined"` for null, absent or `""`). */
  readonly state: string;
}

export function askOf(request: AgentRequest): AgentAsk {
  return { request, groups: normalizeRequestGroups(request.group), state: normalizeRequestState(request.state) };
}

/**
 * TG-6: a tool is offered iff (`"*"` is requested, or its groups meet the requested groups) and
 * (it is offered in every state, or the current state is among its states). Case-sensitive, exact.
 */
export function isToolOffered(
  tool: Pick<GroupedTool, 'groups' | 'states'>,
  requested: RequestedGroups,
  state: string,
): boolean {
  return inRequestedGroups(tool, requested) && inState(tool, state);
}

/** The group half of TG-6. */
export function inRequestedGroups(tool: Pick<GroupedTool, 'groups'>, requested: RequestedGroups): boolean {
  return requested.wildcard || tool.groups.some((group) => requested.groups.includes(group));
}

/** The state half of TG-6. */
export function inState(tool: Pick<GroupedTool, 'states'>, state: string): boolean {
  return tool.states === 'all' || tool.states.has(state);
}

/**
 * TG-7: the state after the tool has run successfully — the tool's `state` when set, otherwise the
 * current state, normalized (null or `""` become `"undefined"`, as TrustGraph does).
 */
export function nextState(tool: Pick<GroupedTool, 'nextState'>, currentState: RequestState): string {
  return tool.nextState ? tool.nextState : normalizeRequestState(currentState);
}
