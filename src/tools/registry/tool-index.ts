/**
 * Precomputed group and state membership of a registry's tools (TG-19 (docs/requirements.md), design decision 4 (docs/design.md)), and the
 * uncached computation of a `ToolSet` from it. Built once per registry; a selection costs
 * O(number of tools), independent of how the tools' groups and states are spelled.
 */
import { frozenSet } from '../freeze.js';
import type { RequestedGroups } from '../../groups/index.js';
import type { Tool, ToolPromptForm } from '../tool.js';
import { LISTED_LEFT_OUT, type ToolSet } from './tool-set.js';
import { runToEnd, type Steps } from '../../threads/index.js';

const IN_GROUP = 1;
const IN_STATE = 2;
const OFFERED = IN_GROUP | IN_STATE;

const NONE: readonly never[] = Object.freeze([]);

export class ToolIndex {
  /** Tool position by name. */
  private readonly positions: ReadonlyMap<string, number>;
  /** Positions of the tools in each group. */
  private readonly groupMembers: ReadonlyMap<string, Uint32Array>;
  /** Positions of the tools that list each state explicitly. */
  private readonly stateMembers: ReadonlyMap<string, Uint32Array>;
  /** Positions of the tools offered in every state. */
  private readonly everyState: Uint32Array;
  /**
   * Private, unfrozen copies for the selection loop, by position. The loop copies from these and never reads a
   * tool object itself: with 100 000 tools the objects lie all over the heap, and reading each offered tool's
   * name and prompt form cost a cache miss apiece (the selection's time per tool doubled from 10 000 tools).
   */
  private readonly toolList: Tool[];
  private readonly allNames: string[];
  private readonly prompts: ToolPromptForm[];

  /** Every group named by a tool. */
  readonly groups: ReadonlySet<string>;
  /** Every state named by a tool, in `applicable-states` or as a `state` target. */
  readonly states: ReadonlySet<string>;

  /**
   * @param membership precomputed by `build`; computed here, in one go, when absent; an index whose tables to
   *   share (see `withTools`)
   */
  constructor(
    readonly tools: readonly Tool[],
    membership: ToolMembership | ToolIndex = runToEnd(membershipSteps(tools, Number.POSITIVE_INFINITY)),
  ) {
    if (membership instanceof ToolIndex) {
      this.positions = membership.positions;
      this.groupMembers = membership.groupMembers;
      this.stateMembers = membership.stateMembers;
      this.everyState = membership.everyState;
      this.toolList = tools.slice();
      this.prompts = promptForms(tools);
      this.allNames = membership.allNames;
      this.groups = membership.groups;
      this.states = membership.states;
      return;
    }
    const { groups, states, everyState, named } = membership;
    this.positions = membership.positions;
    this.groupMembers = toTyped(groups);
    this.stateMembers = toTyped(states);
    this.everyState = Uint32Array.from(everyState);
    this.toolList = membership.toolList;
    this.prompts = promptForms(tools);
    this.allNames = membership.names;
    this.groups = frozenSet(groups.keys());
    this.states = frozenSet([...states.keys(), ...named]);
  }

  /**
   * This index for `tools`, which must have the names, groups, states and `state` targets of this index's
   * tools, position by position (a reload that changed only descriptions, arguments or settings): every
   * table is shared, only the tools are new.
   */
  withTools(tools: readonly Tool[]): ToolIndex {
    return new ToolIndex(tools, this);
  }

  /** Whether `other` shares this index's tables: the same names, groups, states and `state` targets (see `withTools`). */
  sameStructureAs(other: ToolIndex): boolean {
    return this.positions === other.positions;
  }

  /** The position of the tool of this name, if any. */
  positionOf(name: string): number | undefined {
    return this.positions.get(name);
  }

  /** Index `tools` as steps (see time-slices.ts), yielding after every `toolsPerStep` tools. */
  static *build(tools: readonly Tool[], toolsPerStep: number): Steps<ToolIndex> {
    const membership = yield* membershipSteps(tools, toolsPerStep);
    yield;
    return new ToolIndex(tools, membership);
  }

  /** How many tools are in each of `groups` and offered in each of `states` (listing it, or every state). */
  availability(groups: Iterable<string>, states: Iterable<string>): ToolAvailability {
    const inGroups = new Map<string, number>();
    for (const group of groups) inGroups.set(group, this.groupMembers.get(group)?.length ?? 0);
    const inStates = new Map<string, number>();
    for (const state of states) inStates.set(state, this.everyState.length + (this.stateMembers.get(state)?.length ?? 0));
    return { groups: inGroups, states: inStates };
  }

  /** Names of the tools in a group, in config-key order. */
  membersOfGroup(group: string): readonly string[] {
    return [...(this.groupMembers.get(group) ?? [])].map((position) => this.allNames[position] ?? '');
  }

  /** Names of the tools offered in a state (listing it, or every state), in config-key order. */
  offeredInState(state: string): readonly string[] {
    const marks = new Uint8Array(this.tools.length);
    this.markState(marks, state);
    return this.allNames.filter((_, position) => marks[position] === IN_STATE);
  }

  /** Names of the tools offered in every state. */
  offeredInEveryState(): readonly string[] {
    return [...this.everyState].map((position) => this.allNames[position] ?? '');
  }

  // Indexed loops throughout: `for…of` over typed arrays is several times slower in V8.
  private markState(marks: Uint8Array, state: string): void {
    const every = this.everyState;
    for (let i = 0; i < every.length; i++) marks[every[i]!]! |= IN_STATE;
    const members = this.stateMembers.get(state);
    if (members) for (let i = 0; i < members.length; i++) marks[members[i]!]! |= IN_STATE;
  }

  /**
   * Apply TG-6 to every tool: the offered set, and for the tools left out the counts and first names the audit
   * line reads. The full left-out lists are built only when read: with 100 000 tools, arrays of the ~90 % left
   * out made the selection worse than linear in the tools.
   */
  select(requested: RequestedGroups, state: string, registry: { workspace: string; version: number }): ToolSet {
    const count = this.toolList.length;
    const marks = new Uint8Array(count);
    const noGroups = !requested.wildcard && requested.groups.length === 0;
    if (requested.wildcard) marks.fill(IN_GROUP);
    else {
      for (const group of requested.groups) {
        const members = this.groupMembers.get(group);
        if (members) for (let i = 0; i < members.length; i++) marks[members[i]!] = IN_GROUP;
      }
    }
    if (!noGroups) this.markState(marks, state);
    // One pass, plain loops and packed arrays: on some array shapes V8's `Array.prototype.map` takes a
    // slow path that costs more than the whole selection.
    const offered: Tool[] = [];
    const names: string[] = [];
    const promptTools: ToolPromptForm[] = [];
    const byGroupFirst: string[] = [];
    const byStateFirst: string[] = [];
    let byGroupCount = 0;
    let byStateCount = 0;
    for (let position = 0; position < count; position++) {
      const mark = marks[position];
      if (mark === OFFERED) {
        offered.push(this.toolList[position]!);
        names.push(this.allNames[position]!);
        promptTools.push(this.prompts[position]!);
      } else if (mark === IN_GROUP) {
        if (byStateCount++ < LISTED_LEFT_OUT) byStateFirst.push(this.allNames[position]!);
      } else if (byGroupCount++ < LISTED_LEFT_OUT) byGroupFirst.push(this.allNames[position]!);
    }
    const positions = this.positions;
    const tools = this.toolList;
    const allNames = this.allNames;
    const has = (name: string): boolean => {
      const position = positions.get(name);
      return position !== undefined && marks[position] === OFFERED;
    };
    let byGroup: readonly string[] | undefined;
    let byState: readonly string[] | undefined;
    return Object.freeze({
      workspace: registry.workspace,
      version: registry.version,
      groups: Object.isFrozen(requested.groups) ? requested.groups : Object.freeze([...requested.groups]),
      wildcard: requested.wildcard,
      state,
      tools: offered.length === 0 ? NONE : Object.freeze(offered),
      names: Object.freeze(names),
      promptTools: Object.freeze(promptTools),
      get filteredByGroup(): readonly string[] {
        return (byGroup ??= byGroupCount <= LISTED_LEFT_OUT ? byGroupFirst : leftOutNames(marks, allNames, 'group'));
      },
      get filteredByState(): readonly string[] {
        return (byState ??= byStateCount <= LISTED_LEFT_OUT ? byStateFirst : leftOutNames(marks, allNames, 'state'));
      },
      filteredByGroupCount: byGroupCount,
      filteredByGroupFirst: Object.freeze(byGroupFirst),
      filteredByStateCount: byStateCount,
      filteredByStateFirst: Object.freeze(byStateFirst),
      has,
      get: (name: string): Tool | undefined => (has(name) ? tools[positions.get(name)!] : undefined),
      leftOutBy: (name: string): 'group' | 'state' | undefined => {
        const position = positions.get(name);
        return position === undefined ? undefined : reasonOf(marks[position]!);
      },
    });
  }
}

/** Why a tool with this mark is not offered; undefined when it is. */
function reasonOf(mark: number): 'group' | 'state' | undefined {
  if (mark === OFFERED) return undefined;
  return mark === IN_GROUP ? 'state' : 'group';
}

/** The names of the tools left out for `reason`, in config-key order, frozen. */
function leftOutNames(marks: Uint8Array, names: readonly string[], reason: 'group' | 'state'): readonly string[] {
  const out: string[] = [];
  for (let position = 0; position < marks.length; position++) if (reasonOf(marks[position]!) === reason) out.push(names[position]!);
  return Object.freeze(out);
}

/** Tools per group and per state. */
export interface ToolAvailability {
  readonly groups: ReadonlyMap<string, number>;
  readonly states: ReadonlyMap<string, number>;
}

/** Which tools are in each group and state, by position. */
export interface ToolMembership {
  readonly groups: Map<string, number[]>;
  readonly states: Map<string, number[]>;
  readonly everyState: number[];
  /** States named as a `state` target. */
  readonly named: Set<string>;
  /** Tool position by name. */
  readonly positions: Map<string, number>;
  /** The tools and their names, by position (unfrozen copies: see `ToolIndex.toolList`). */
  readonly toolList: Tool[];
  readonly names: string[];
}

function* membershipSteps(tools: readonly Tool[], toolsPerStep: number): Steps<ToolMembership> {
  const membership: ToolMembership = {
    groups: new Map(),
    states: new Map(),
    everyState: [],
    named: new Set(),
    positions: new Map(),
    toolList: [],
    names: [],
  };
  for (let position = 0; position < tools.length; position++) {
    const tool = tools[position]!;
    membership.positions.set(tool.name, position);
    // Pushed, not assigned by index: packed arrays keep the selection loop on V8's fast path.
    membership.toolList.push(tool);
    membership.names.push(tool.name);
    for (const group of tool.groups) push(membership.groups, group, position);
    if (tool.states === 'all') membership.everyState.push(position);
    else for (const state of tool.states) push(membership.states, state, position);
    if (tool.nextState !== undefined) membership.named.add(tool.nextState);
    if ((position + 1) % toolsPerStep === 0) yield;
  }
  return membership;
}

/** Each tool's prompt form, by position (pushed: a packed array). */
function promptForms(tools: readonly Tool[]): ToolPromptForm[] {
  const forms: ToolPromptForm[] = [];
  for (let position = 0; position < tools.length; position++) forms.push(tools[position]!.prompt);
  return forms;
}

function push(map: Map<string, number[]>, key: string, position: number): void {
  const list = map.get(key);
  if (list) {
    if (list[list.length - 1] !== position) list.push(position);
  } else map.set(key, [position]);
}

function toTyped(map: Map<string, number[]>): ReadonlyMap<string, Uint32Array> {
  return new Map([...map].map(([key, positions]) => [key, Uint32Array.from(positions)]));
}
