/**
 * The linter's checks on names: a group only one tool has that is a near miss of a group other tools use (a
 * misspelling), and tool names that differ only in case. Each is one pass over the tools plus, for near
 * misses, one look-up per group in a symmetric-delete index (near-names.ts): linear in tools and groups.
 */
import { CHEAP_ITEMS_PER_STEP, type Steps } from '../threads/index.js';
import { quote, quoteList } from '../errors/index.js';
import type { Tool } from '../tools/index.js';
import { finding, type Finding } from './finding.js';
import { NearNames } from './near-names.js';

/** A group only one tool has, whose name is a case variant of, or within two edits of, a group other tools use. */
export function* groupNearMissSteps(tools: readonly Tool[], out: Finding[]): Steps<void> {
  // Group → how many tools have it, and the first of them; in the order the tools name them.
  const users = new Map<string, number>();
  const firstUser = new Map<string, string>();
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i]!;
    for (const group of tool.groups) {
      const count = users.get(group) ?? 0;
      users.set(group, count + 1);
      if (count === 0) firstUser.set(group, tool.name);
    }
    if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
  }
  const shared: string[] = [];
  let counted = 0;
  for (const [group, count] of users) {
    if (count > 1) shared.push(group);
    if (++counted % CHEAP_ITEMS_PER_STEP === 0) yield;
  }
  if (shared.length === 0) return;
  const index = yield* NearNames.build(shared);
  let looked = 0;
  for (const [group, count] of users) {
    if (count !== 1) {
      if (++looked % CHEAP_ITEMS_PER_STEP === 0) yield;
      continue;
    }
    const near = index.near(group).map((position) => shared[position]!);
    if (near.length > 0) {
      const holder = firstUser.get(group)!;
      out.push(
        finding(
          'warning',
          'group-near-miss',
          `group ${quote(group)} is used by tool ${quote(holder)} only, and is close to ${quoteList(near)} used by other tools: a misspelling? ` +
            'A request naming the other group is never offered this tool',
          { tools: [holder], groups: [group, ...near] },
        ),
      );
    }
    yield;
  }
  if (index.caseOnly > 0) {
    out.push(
      finding(
        'info',
        'group-near-miss',
        `${index.caseOnly} of the ${shared.length} groups that several tools use were compared with the others by case only, not by ` +
          'spelling: the workspace has too many groups to index them all for misspellings',
      ),
    );
  }
}

/** Tool names that differ only in case. */
export function* caseCollisionSteps(tools: readonly Tool[], out: Finding[]): Steps<void> {
  const byLower = new Map<string, string[]>();
  for (let i = 0; i < tools.length; i++) {
    const name = tools[i]!.name;
    const lower = name.toLowerCase();
    const names = byLower.get(lower);
    if (names === undefined) byLower.set(lower, [name]);
    else names.push(name);
    if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
  }
  let seen = 0;
  for (const names of byLower.values()) {
    if (names.length > 1) {
      out.push(finding('warning', 'case-colliding-names', `tool names ${quoteList(names)} differ only in case: a model writing either may get the other`, { tools: names }));
    }
    if (++seen % CHEAP_ITEMS_PER_STEP === 0) yield;
  }
}

/**
 * A misspelt state: a state some tool is available in that no conversation reaches, close to one conversations
 * do reach; or a state a tool leads to where no tool is listed, close to one where tools are. When both sides
 * of a pair are unmatched (one only listed, the other only led to), either may be the typo: both fixes are named.
 */
export function* stateNearMissSteps(tools: readonly Tool[], initial: ReadonlySet<string>, out: Finding[]): Steps<void> {
  // State → the first tool listing it, and the first tool leading to it; in the order the tools name them.
  const listed = new Map<string, string>();
  const entered = new Map<string, string>();
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i]!;
    if (tool.states !== 'all') for (const state of tool.states) if (!listed.has(state)) listed.set(state, tool.name);
    if (tool.nextState !== undefined && !entered.has(tool.nextState)) entered.set(tool.nextState, tool.name);
    if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
  }
  const reached = (state: string): boolean => entered.has(state) || initial.has(state);
  const reachedNames = [...new Set([...initial, ...entered.keys()])];
  const reachedIndex = yield* NearNames.build(reachedNames);
  let looked = 0;
  for (const [state, tool] of listed) {
    if (++looked % CHEAP_ITEMS_PER_STEP === 0) yield;
    if (reached(state)) continue;
    for (const other of reachedIndex.near(state).map((position) => reachedNames[position]!)) {
      const leader = entered.get(other);
      const message =
        listed.has(other) || leader === undefined
          ? `tool ${quote(tool)} is available in state ${quote(state)}, which no conversation reaches: did you mean ${quote(other)}?`
          : `tool ${quote(tool)} is available in state ${quote(state)}, which no conversation reaches, and tool ${quote(leader)} leads to state ` +
            `${quote(other)}, where no tool is listed: did you mean ${quote(other)} in ${quote(tool)}'s applicable-states, or ${quote(state)} as ` +
            `${quote(leader)}'s state?`;
      out.push(finding('warning', 'state-near-miss', message, { tools: leader === undefined ? [tool] : [tool, leader], states: [state, other] }));
    }
  }
  const listedNames = [...listed.keys()].filter(reached);
  const listedIndex = yield* NearNames.build(listedNames);
  for (const [state, tool] of entered) {
    if (++looked % CHEAP_ITEMS_PER_STEP === 0) yield;
    if (listed.has(state) || initial.has(state)) continue;
    for (const other of listedIndex.near(state).map((position) => listedNames[position]!)) {
      out.push(
        finding('warning', 'state-near-miss', `tool ${quote(tool)} moves the conversation to state ${quote(state)}, where no tool is listed: did you mean ${quote(other)}?`, {
          tools: [tool],
          states: [state, other],
        }),
      );
    }
  }
}
