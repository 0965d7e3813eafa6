/**
 * The linter's checks on states: tools available only in states no conversation reaches, states a tool leads
 * to where no tool is available (dead ends), and transitions into a state where no tool of the leading tool's
 * own groups is available. One pass indexes the tools by the states they list and the states they lead to;
 * reachability is a breadth-first walk that visits each (state, tool) pair once; each target state's tools
 * are read once for the groups its leaders need. Linear in tools, their states and their groups.
 */
import { MAX_LISTED, quote, quoteList } from '../errors/index.js';
import { DEFAULT_STATE, type GroupPolicy, WILDCARD } from '../groups/index.js';
import { CHEAP_ITEMS_PER_STEP, type Steps } from '../threads/index.js';
import type { Tool } from '../tools/index.js';
import { finding, type Finding } from './finding.js';

/** Where the tools are: positions by the state they list, those of every state, and positions by the state they lead to. */
interface StateIndex {
  readonly listing: Map<string, number[]>;
  readonly everyState: number[];
  /** Target state → the tools leading there, in config-key order; states in the order tools first lead to them. */
  readonly ledTo: Map<string, number[]>;
}

const push = (map: Map<string, number[]>, key: string, position: number): void => {
  const list = map.get(key);
  if (list === undefined) map.set(key, [position]);
  else list.push(position);
};

function* indexSteps(tools: readonly Tool[]): Steps<StateIndex> {
  const index: StateIndex = { listing: new Map(), everyState: [], ledTo: new Map() };
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i]!;
    if (tool.states === 'all') index.everyState.push(i);
    else for (const state of tool.states) push(index.listing, state, i);
    if (tool.nextState !== undefined) push(index.ledTo, tool.nextState, i);
    if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
  }
  return index;
}

/** States a conversation can be in: the initial ones, and every state a tool available in one of them leads to. */
function* reachableSteps(tools: readonly Tool[], index: StateIndex, initial: ReadonlySet<string>): Steps<Set<string>> {
  const reachable = new Set<string>();
  const queue: string[] = [];
  const reach = (state: string | undefined): void => {
    if (state === undefined || reachable.has(state)) return;
    reachable.add(state);
    queue.push(state);
  };
  initial.forEach(reach);
  // A tool of every state leads on from wherever a conversation is.
  for (const position of index.everyState) reach(tools[position]!.nextState);
  let visited = 0;
  for (let state = queue.pop(); state !== undefined; state = queue.pop()) {
    for (const position of index.listing.get(state) ?? []) {
      reach(tools[position]!.nextState);
      if (++visited % CHEAP_ITEMS_PER_STEP === 0) yield;
    }
  }
  return reachable;
}

export function* stateFindingSteps(tools: readonly Tool[], policy: GroupPolicy | undefined, out: Finding[]): Steps<void> {
  const initial = policy?.initialStates ?? new Set([DEFAULT_STATE]);
  const index = yield* indexSteps(tools);
  const reachable = yield* reachableSteps(tools, index, initial);
  const initialText = `the initial state${initial.size === 1 ? '' : 's'} ${quoteList([...initial])}`;
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i]!;
    if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
    if (tool.states === 'all') continue;
    let reached = false;
    for (const state of tool.states) if ((reached = reachable.has(state))) break;
    if (reached) continue;
    const states = [...tool.states];
    out.push(
      finding(
        'warning',
        'unreachable-state',
        `tool ${quote(tool.name)} is available only in ${quoteList(states)}, which no conversation reaches: no tool leads there from ` +
          `${initialText}. Only a request naming such a state itself is offered it`,
        { tools: [tool.name], states },
      ),
    );
  }
  yield* targetSteps(tools, index, out);
}

/** Every state a tool leads to: a dead end when no tool is available there, else a hint per leader whose groups can do nothing there. */
function* targetSteps(tools: readonly Tool[], index: StateIndex, out: Finding[]): Steps<void> {
  // The groups of the tools of every state (available in any target state too).
  const everyGroups = new Set<string>();
  for (const position of index.everyState) for (const group of tools[position]!.groups) everyGroups.add(group);
  yield;
  for (const [state, leaders] of index.ledTo) {
    const listing = index.listing.get(state) ?? [];
    const available = listing.length + index.everyState.length;
    if (available === 0) {
      const leaderNames = leaders.map((position) => tools[position]!.name);
      out.push(
        finding(
          'error',
          'dead-end-state',
          `state ${quote(state)} (reached through ${quoteList(leaderNames)}) has no tool available: a conversation there can only answer, never act ` +
            'or leave it. Make a tool available there (applicable-states) to continue or to reset',
          { tools: leaderNames, states: [state] },
        ),
      );
      yield;
      continue;
    }
    if (everyGroups.has(WILDCARD)) continue;
    // Only the groups the leaders have matter: which of them a tool available here has.
    const wanted = new Set<string>();
    for (const position of leaders) for (const group of tools[position]!.groups) if (!everyGroups.has(group)) wanted.add(group);
    const present = new Set<string>();
    let wildcard = false;
    for (let i = 0; i < listing.length && !wildcard && present.size < wanted.size; i++) {
      for (const group of tools[listing[i]!]!.groups) {
        if (group === WILDCARD) wildcard = true;
        else if (wanted.has(group)) present.add(group);
      }
      if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
    }
    if (!wildcard) yield* lostGroupSteps(tools, state, leaders, { listing, everyState: index.everyState }, (group) => everyGroups.has(group) || present.has(group), out);
    yield;
  }
}

/** A hint per leader into `state` none of whose groups a tool available there has. */
function* lostGroupSteps(
  tools: readonly Tool[],
  state: string,
  leaders: readonly number[],
  available: { listing: readonly number[]; everyState: readonly number[] },
  servedThere: (group: string) => boolean,
  out: Finding[],
): Steps<void> {
  let availableText: string | undefined;
  for (let i = 0; i < leaders.length; i++) {
    const tool = tools[leaders[i]!]!;
    if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
    if (tool.groups.length === 0 || tool.groups.some(servedThere)) continue;
    availableText ??= quoteList(
      firstNames(tools, available.listing, available.everyState, MAX_LISTED),
      MAX_LISTED,
      available.listing.length + available.everyState.length,
    );
    out.push(
      finding(
        'info',
        'transition-loses-groups',
        `tool ${quote(tool.name)} (groups ${quoteList(tool.groups)}) moves to state ${quote(state)}, where no tool of those groups is available ` +
          `(available there: ${availableText}): a request with only those groups can only answer after it`,
        { tools: [tool.name], groups: tool.groups, states: [state] },
      ),
    );
  }
}

/** The names of the first `count` tools of two ascending position lists merged, in config-key order. */
function firstNames(tools: readonly Tool[], a: readonly number[], b: readonly number[], count: number): string[] {
  const names: string[] = [];
  let i = 0;
  let j = 0;
  while (names.length < count && (i < a.length || j < b.length)) {
    const next = j >= b.length || (i < a.length && a[i]! < b[j]!) ? a[i++]! : b[j++]!;
    names.push(tools[next]!.name);
  }
  return names;
}
