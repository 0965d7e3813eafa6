/**
 * The tool registry of one workspace (TG-8 (docs/requirements.md), design decisions 4–5 (docs/design.md)): built from the workspace's `tool`
 * and `tool-service` config, immutable, versioned, replaced as a whole on every change. Building never
 * throws; invalid entries are left out and reported as `problems`.
 */
import type { ArgumentSource, ArgumentsReport } from '../arguments/argument-source.js';
import type { ToolLoadCache } from '../config/tool-load-cache.js';
import { describeValue, quote } from '../describe-value.js';
import { deepFreeze, frozenMap, frozenSet } from '../freeze.js';
import { buildListing, type RegistryListing } from './listing.js';
import { loadTool, type ToolLoad, type ToolServiceLookup } from '../config/load-tool.js';
import { mcpGroupsOf } from '../config/inherited-groups.js';
import { loadToolService } from '../config/load-tool-service.js';
import { LruCache } from './lru.js';
import { makeProblem, type ConfigKind, type Problem } from '../config/problems.js';
import {
  DEFAULT_GROUP,
  DEFAULT_STATE,
  nextState,
  normalizeRequestGroups,
  normalizeRequestState,
  type AgentAsk,
  type RequestedGroups,
  type RequestGroups,
  type RequestState,
} from './selection.js';
import type { Tool, ToolServiceDescriptor } from '../tool.js';
import { ToolIndex, type ToolAvailability } from './tool-index.js';
import { CHEAP_ITEMS_PER_STEP, runInSlices, runToEnd, type Steps } from '../../threads/time-slices.js';
import type { ToolSet } from './tool-set.js';

/** Default number of (groups, state) tool sets kept per registry. */
export const DEFAULT_TOOL_SET_CACHE_SIZE = 128;

export interface BuildRegistryInput {
  readonly workspace: string;
  /** Config type `tool`: config key → JSON string. Anything else is reported, never thrown. */
  readonly tools?: Readonly<Record<string, unknown>> | null;
  /** Config type `tool-service`: config key → JSON string. */
  readonly toolServices?: Readonly<Record<string, unknown>> | null;
  /** Config type `mcp`: config key → JSON string; read for the entries' `group`, which their tools inherit. */
  readonly mcpServers?: Readonly<Record<string, unknown>> | null;
  /** The config version this registry was built from. */
  readonly version: number;
  /** How many request tool sets to cache (LRU); 0 disables the cache. */
  readonly cacheSize?: number;
  /**
   * Where `mcp-tool` arguments come from besides the config: MCP discovery's snapshot of the workspace's `mcp` entries
   * (design decision 9 (docs/design.md)); absent when discovery is off. `mcp-tool` tools without declared arguments take the server's; declared ones are checked for drift.
   */
  readonly mcp?: ArgumentSource;
  /** Loaded tools of the previous build to reuse when unchanged (see tool-load-cache.ts). */
  readonly loadCache?: ToolLoadCache;
  /**
   * The registry this one replaces. When only tool values changed (no key added or removed, the same
   * `tool-service` values and MCP snapshot) and every changed tool keeps its name, groups, states and
   * `state` target and has no problem, before or after, the new registry is this one patched: the changed
   * tools loaded, every table of the index shared (see `patchSteps`). Otherwise it is built from scratch.
   */
  readonly previous?: ToolRegistry;
}

export interface FilterOptions {
  /** `false` computes the tool set without reading or filling the cache (benchmarks, diagnostics). */
  readonly cache?: boolean;
}

export interface ToolSetCacheStats {
  readonly size: number;
  readonly capacity: number;
  readonly hits: number;
  readonly misses: number;
}

export interface ToolRegistry {
  readonly workspace: string;
  readonly version: number;
  /** Every loaded tool, in ascending config-key order. */
  readonly tools: readonly Tool[];
  /** The valid tool-service descriptors, by config key. */
  readonly toolServices: ReadonlyMap<string, ToolServiceDescriptor>;
  /** Entries that were left out (severity `error`) or partly ignored (`warning`). */
  readonly problems: readonly Problem[];
  /** Every group named by a tool, plus `"default"`. For clamping metric labels. */
  readonly knownGroups: ReadonlySet<string>;
  /** Every state named by a tool (`applicable-states` and `state` targets), plus `"undefined"`. */
  readonly knownStates: ReadonlySet<string>;
  /** Tool name → MCP discovery report of each `mcp-tool`; empty when discovery is off. */
  readonly mcp: ReadonlyMap<string, ArgumentsReport>;
  /** The tool of this name, offered or not. */
  get(name: string): Tool | undefined;
  /**
   * The tools a request may use, with TrustGraph's defaults applied to `groups` and `state`
   * (see `selection.ts`). Cached per (sorted groups, state): a hit returns the same object in O(1).
   */
  filter(groups: RequestGroups, state: RequestState, options?: FilterOptions): ToolSet;
  /** The same for a request whose defaults are applied already (an `AgentAsk`). */
  offer(ask: Pick<AgentAsk, 'groups' | 'state'>, options?: FilterOptions): ToolSet;
  /** TG-7: the state after `tool` has run successfully from `currentState`. */
  nextState(tool: Tool, currentState: RequestState): string;
  /** Groups, states, tools and problems, as plain JSON for the HTTP listing. Computed once. */
  listing(): RegistryListing;
  /** How many tools are in each known group and offered in each known state (from the index, no pass over the tools). Computed once. */
  availability(): ToolAvailability;
  /**
   * Whether `other` has the same tool names, groups, states and known groups and states as this registry
   * (one is the other patched, see `BuildRegistryInput.previous`): what label values and availability
   * gauges depend on did not change.
   */
  sameToolNamesAs(other: ToolRegistry): boolean;
  cacheStats(): ToolSetCacheStats;
}

export interface BuildRegistryResult {
  readonly registry: ToolRegistry;
  /** The same list as `registry.problems`. */
  readonly problems: readonly Problem[];
}

const HAS_SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Order of config keys as the config service returns them (Cassandra: UTF-8 byte order, which is
 * code-point order). UTF-16 order differs only when surrogate pairs are involved.
 */
export function compareConfigKeys(a: string, b: string): number {
  if (HAS_SURROGATE.test(a) || HAS_SURROGATE.test(b)) return Buffer.compare(Buffer.from(a), Buffer.from(b));
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The entries of a config type in config-key order, as steps (yielding every `CHEAP_ITEMS_PER_STEP` keys:
 * 10 000 tools are 10 000 entries), or a problem when the type's value is not a key → value map.
 */
function* entriesOf(
  workspace: string,
  kind: ConfigKind,
  values: unknown,
  problems: Problem[],
): Steps<[string, unknown][]> {
  if (values === null || values === undefined) return [];
  if (typeof values !== 'object' || Array.isArray(values)) {
    problems.push(
      makeProblem(
        { workspace, kind, key: '' },
        { message: `config type "${kind}" must map config keys to JSON strings, got ${describeValue(values)}` },
      ),
    );
    return [];
  }
  const map = values as Record<string, unknown>;
  const keys = Object.keys(map);
  const entries = new Array<[string, unknown]>(keys.length);
  // Checking each key once, not on every comparison: sorting 10 000 keys compares them ~130 000 times.
  let surrogates = false;
  // The config service answers in key order, so the entries usually are sorted already: one pass instead of a sort.
  let sorted = true;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    entries[i] = [key, map[key]];
    if (!surrogates && HAS_SURROGATE.test(key)) surrogates = true;
    if (sorted && i > 0 && keys[i - 1]! > key) sorted = false;
    if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
  }
  if (surrogates) return entries.sort(([a], [b]) => compareConfigKeys(a, b));
  if (sorted) return entries;
  return entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

const SEPARATOR = '\u0000';

/**
 * The cache key of a normalized request. Names are joined with NUL, which no sane group or state name
 * contains; if one does, the key falls back to JSON (another prefix), so no two requests ever share a key.
 */
function cacheKey(requested: RequestedGroups, state: string): string {
  if (requested.wildcard) return state.includes(SEPARATOR) ? `\u0003${JSON.stringify(state)}` : `\u0001${state}`;
  const groups = requested.groups;
  let clean = !state.includes(SEPARATOR);
  for (let i = 0; clean && i < groups.length; i++) clean = !groups[i]!.includes(SEPARATOR);
  return clean ? `\u0002${state}${SEPARATOR}${groups.join(SEPARATOR)}` : `\u0004${JSON.stringify([state, groups])}`;
}

function cacheCapacity(size: number | undefined): number {
  if (size === undefined || !Number.isFinite(size)) return DEFAULT_TOOL_SET_CACHE_SIZE;
  return Math.max(0, Math.floor(size));
}

/** What tool loading depends on besides the tool's own value: the tool-service descriptors. */
function servicesFingerprint(values: unknown): string {
  if (values === null || values === undefined || typeof values !== 'object') return String(values);
  try {
    return JSON.stringify(Object.entries(values as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  } catch {
    // Not serialisable (e.g. nested too deep to stringify): a fingerprint nothing matches, so nothing is reused.
    return `unmatched:${Math.random()}`;
  }
}

/** A failure nobody foresaw while loading one entry: that entry is left out, the others still load. */
function unexpectedProblem(workspace: string, kind: ConfigKind, key: string, error: unknown): Problem {
  const reason = error instanceof RangeError ? 'value too large or too deeply nested to process' : String(error);
  return makeProblem({ workspace, kind, key }, { message: `could not be loaded (${reason.slice(0, 200)}); left out` });
}

/** `problems` frozen, each problem whole, yielding between them (thousands of bad entries are thousands of problems). */
function* deepFreezeSteps(problems: Problem[]): Steps<readonly Problem[]> {
  for (let i = 0; i < problems.length; i++) {
    deepFreeze(problems[i]);
    if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
  }
  return Object.freeze(problems);
}

/** Build a workspace's registry now, in one go. Never throws on bad configuration. */
export function buildRegistry(input: BuildRegistryInput): BuildRegistryResult {
  return runToEnd(registrySteps(input));
}

/**
 * Build a workspace's registry in time slices (see time-slices.ts), the event loop free between them: what a
 * reload of thousands of tools uses. The result is the same as `buildRegistry`'s; until the promise resolves,
 * nothing of the new registry is visible, so requests meanwhile see the previous one, whole. Never rejects on
 * bad configuration.
 */
export function buildRegistryInSlices(input: BuildRegistryInput, sliceMs?: number): Promise<BuildRegistryResult> {
  return runInSlices(registrySteps(input), sliceMs);
}

/**
 * What a registry was built from, kept for patching it (`patchSteps`): the `tool` values, the dependencies
 * of loading, and its index. Never visible outside this module; dropped with the registry.
 */
interface Basis {
  /** The `tool` config values, and how many keys they have. */
  readonly tools: Readonly<Record<string, unknown>>;
  readonly toolCount: number;
  readonly servicesFingerprint: string;
  readonly mcp: ArgumentSource | undefined;
  readonly lookup: ToolServiceLookup;
  /** Tool config keys with any problem (left out, a warning, a duplicate name): a change of those is built from scratch. */
  readonly problemKeys: ReadonlySet<string>;
  readonly index: ToolIndex;
  /** What every registry patched from the same build shares (the index's tables, so the same counts). */
  readonly shared: { availability?: ToolAvailability };
}

const bases = new WeakMap<ToolRegistry, Basis>();

/** The build, as steps: the previous registry patched when it can be, otherwise from scratch. */
function* registrySteps(input: BuildRegistryInput): Steps<BuildRegistryResult> {
  // Tools inherit groups from their tool-service and mcp entries: a change of either rebuilds every tool.
  const fingerprint = `${servicesFingerprint(input.toolServices)}|${servicesFingerprint(input.mcpServers ?? {})}`;
  if (input.previous !== undefined) {
    const patched = yield* patchSteps(input, input.previous, fingerprint);
    if (patched !== undefined) return patched;
    yield;
  }
  return yield* fullSteps(input, fingerprint);
}

/** Whether the index places `after` exactly where it placed `before`: same name, groups, states and `state` target. */
function sameIndexing(before: Tool, after: Tool): boolean {
  if (before.name !== after.name || before.nextState !== after.nextState) return false;
  const [a, b] = [before.groups, after.groups];
  if (a.length !== b.length || a.some((group, i) => group !== b[i])) return false;
  const [x, y] = [before.states, after.states];
  if (x === 'all' || y === 'all') return x === y;
  if (x.size !== y.size) return false;
  for (const state of x) if (!y.has(state)) return false;
  return true;
}

/** Position of the tool of config key `key` in `tools` (ascending config-key order), or -1. */
function positionOfKey(tools: readonly Tool[], key: string): number {
  let low = 0;
  let high = tools.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const order = compareConfigKeys(tools[middle]!.key, key);
    if (order === 0) return middle;
    if (order < 0) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}

/**
 * `previous` with the changed tool values of `input` loaded in place, or undefined when it cannot be patched
 * (then the caller builds from scratch; what was loaded here is in the load cache). A reload that changed one
 * of 10 000 tools then loads one tool and copies two arrays, instead of rebuilding (and leaving for the
 * garbage collector) every table of the index. `previous` itself is not touched.
 */
function* patchSteps(input: BuildRegistryInput, previous: ToolRegistry, fingerprint: string): Steps<BuildRegistryResult | undefined> {
  const basis = bases.get(previous);
  const workspace = String(input.workspace);
  const values = input.tools;
  if (basis === undefined || previous.workspace !== workspace) return undefined;
  if (values === null || values === undefined || typeof values !== 'object' || Array.isArray(values)) return undefined;
  if (basis.servicesFingerprint !== fingerprint || basis.mcp !== input.mcp) return undefined;

  // Unchanged values are usually the very strings of the previous answer (values-delta.ts): comparing them is a pointer check.
  const before = basis.tools;
  const changed: string[] = [];
  let count = 0;
  for (const key in values) {
    if (!Object.hasOwn(values, key)) continue;
    if (!Object.hasOwn(before, key)) return undefined;
    if (before[key] !== values[key]) changed.push(key);
    if (++count % CHEAP_ITEMS_PER_STEP === 0) yield;
  }
  if (count !== basis.toolCount) return undefined;
  yield;

  const replaced: [number, Tool, ArgumentsReport | undefined][] = [];
  let mcpChanged = false;
  for (const key of changed) {
    const at = positionOfKey(previous.tools, key);
    if (at < 0 || basis.problemKeys.has(key)) return undefined;
    const raw = values[key];
    let loaded: ToolLoad;
    try {
      loaded = loadTool(workspace, key, raw, basis.lookup, input.mcp);
    } catch {
      // The build from scratch reports it.
      return undefined;
    }
    input.loadCache?.update(key, raw, loaded);
    const old = previous.tools[at]!;
    if (loaded.tool === undefined || loaded.problems.length > 0 || !sameIndexing(old, loaded.tool)) return undefined;
    if (loaded.mcp !== undefined || previous.mcp.has(old.name)) mcpChanged = true;
    replaced.push([at, loaded.tool, loaded.mcp]);
    yield;
  }

  const list = previous.tools.slice();
  for (const [at, tool] of replaced) list[at] = tool;
  const tools = Object.freeze(list);
  yield;
  let mcp = previous.mcp;
  if (mcpChanged) {
    const reports = new Map(previous.mcp);
    for (const [, tool, report] of replaced) {
      if (report === undefined) reports.delete(tool.name);
      else reports.set(tool.name, report);
    }
    mcp = frozenMap(reports);
  }
  const index = basis.index.withTools(tools);
  const registry = assembleRegistry({
    workspace,
    version: input.version,
    tools,
    toolServices: previous.toolServices,
    problems: previous.problems,
    knownGroups: previous.knownGroups,
    knownStates: previous.knownStates,
    mcp,
    index,
    shared: basis.shared,
    cacheSize: input.cacheSize,
  });
  bases.set(registry, { ...basis, tools: values, toolCount: count, index });
  return { registry, problems: registry.problems };
}

/** The build from scratch, as steps: yields between entries and between passes. */
function* fullSteps(input: BuildRegistryInput, fingerprint: string): Steps<BuildRegistryResult> {
  const workspace = String(input.workspace);
  const version = input.version;
  const problems: Problem[] = [];

  const services = new Map<string, ToolServiceDescriptor>();
  const invalidServices = new Set<string>();
  for (const [key, raw] of yield* entriesOf(workspace, 'tool-service', input.toolServices, problems)) {
    let loaded: ReturnType<typeof loadToolService>;
    try {
      loaded = loadToolService(workspace, key, raw);
    } catch (error) {
      loaded = { problems: [unexpectedProblem(workspace, 'tool-service', key, error)] };
    }
    problems.push(...loaded.problems);
    if (loaded.descriptor) services.set(key, loaded.descriptor);
    else invalidServices.add(key);
    yield;
  }
  yield;
  const mcpGroups = mcpGroupsOf(input.mcpServers);
  const lookup: ToolServiceLookup = { services, invalid: invalidServices, mcpGroups };

  const loadedTools: Tool[] = [];
  const mcpReports = new Map<Tool, ArgumentsReport>();
  const session = input.loadCache?.begin(fingerprint, input.mcp);
  const problemsBeforeTools = problems.length;
  const toolEntries = yield* entriesOf(workspace, 'tool', input.tools, problems);
  yield;
  for (const [key, raw] of toolEntries) {
    let loaded = session?.get(key, raw);
    if (!loaded) {
      try {
        loaded = loadTool(workspace, key, raw, lookup, input.mcp);
      } catch (error) {
        loaded = { problems: [unexpectedProblem(workspace, 'tool', key, error)] };
      }
      session?.set(key, raw, loaded);
    }
    problems.push(...loaded.problems);
    if (loaded.tool) {
      loadedTools.push(loaded.tool);
      if (loaded.mcp) mcpReports.set(loaded.tool, loaded.mcp);
    }
    yield;
  }

  session?.end();

  // Duplicate names: the greatest config key wins (TrustGraph's later key overwrites the earlier).
  // Every pass over the tools yields every CHEAP_ITEMS_PER_STEP tools: 10 000 map inserts are milliseconds.
  const winners = new Map<string, Tool>();
  for (let i = 0; i < loadedTools.length; i++) {
    winners.set(loadedTools[i]!.name, loadedTools[i]!);
    if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
  }
  yield;
  const kept: Tool[] = [];
  const mcp: [string, ArgumentsReport][] = [];
  for (let i = 0; i < loadedTools.length; i++) {
    const tool = loadedTools[i]!;
    if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
    const winner = winners.get(tool.name)!;
    if (winner === tool) {
      kept.push(tool);
      const report = mcpReports.get(tool);
      if (report !== undefined) mcp.push([tool.name, report]);
      continue;
    }
    problems.push(
      makeProblem(
        { workspace, kind: 'tool', key: tool.key, name: tool.name },
        {
          field: 'name',
          message:
            `duplicate tool name ${quote(tool.name)}: config key ${quote(winner.key)} defines it too and wins ` +
            `(the greatest config key wins); this entry is left out`,
        },
      ),
    );
  }

  const tools = Object.freeze(kept);
  yield;
  const index = yield* ToolIndex.build(tools, CHEAP_ITEMS_PER_STEP);
  const mcpByName = frozenMap(mcp);
  yield;
  const frozenProblems = yield* deepFreezeSteps(problems);
  const shared: Basis['shared'] = {};
  const problemKeys = new Set<string>();
  for (let i = problemsBeforeTools; i < problems.length; i++) if (problems[i]!.kind === 'tool') problemKeys.add(problems[i]!.key);
  yield;

  const registry = assembleRegistry({
    workspace,
    version,
    tools,
    toolServices: frozenMap(services),
    problems: frozenProblems,
    knownGroups: frozenSet([DEFAULT_GROUP, ...index.groups]),
    knownStates: frozenSet([DEFAULT_STATE, ...index.states]),
    mcp: mcpByName,
    index,
    shared,
    cacheSize: input.cacheSize,
  });
  const values = input.tools;
  if (values !== null && values !== undefined && typeof values === 'object' && !Array.isArray(values)) {
    bases.set(registry, {
      tools: values,
      toolCount: toolEntries.length,
      servicesFingerprint: fingerprint,
      mcp: input.mcp,
      lookup,
      problemKeys,
      index,
      shared,
    });
  }
  return { registry, problems: frozenProblems };
}

/** What a registry holds, and what its methods work from. */
type RegistryParts = Pick<ToolRegistry, 'workspace' | 'version' | 'tools' | 'toolServices' | 'problems' | 'knownGroups' | 'knownStates' | 'mcp'> & {
  readonly index: ToolIndex;
  readonly shared: Basis['shared'];
  readonly cacheSize: number | undefined;
};

/** The registry object over its parts, with an empty tool-set cache. */
function assembleRegistry(parts: RegistryParts): ToolRegistry {
  const { index, shared } = parts;
  const cache = new LruCache<string, ToolSet>(cacheCapacity(parts.cacheSize));
  let listing: RegistryListing | undefined;
  const registry: ToolRegistry = Object.freeze({
    workspace: parts.workspace,
    version: parts.version,
    tools: parts.tools,
    toolServices: parts.toolServices,
    problems: parts.problems,
    knownGroups: parts.knownGroups,
    knownStates: parts.knownStates,
    mcp: parts.mcp,
    get(name: string): Tool | undefined {
      const position = index.positionOf(name);
      return position === undefined ? undefined : parts.tools[position];
    },
    filter(groups: RequestGroups, state: RequestState, options?: FilterOptions): ToolSet {
      return registry.offer({ groups: normalizeRequestGroups(groups), state: normalizeRequestState(state) }, options);
    },
    offer({ groups: requested, state: current }: Pick<AgentAsk, 'groups' | 'state'>, options?: FilterOptions): ToolSet {
      if (options?.cache === false) return index.select(requested, current, registry);
      const key = cacheKey(requested, current);
      const cached = cache.get(key);
      if (cached !== undefined) return cached;
      const computed = index.select(requested, current, registry);
      cache.set(key, computed);
      return computed;
    },
    nextState: (tool: Tool, currentState: RequestState) => nextState(tool, currentState),
    listing(): RegistryListing {
      listing ??= buildListing(registry, index);
      return listing;
    },
    availability(): ToolAvailability {
      // The counts come from the index's tables, which every registry patched from one build shares.
      shared.availability ??= index.availability(registry.knownGroups, registry.knownStates);
      return shared.availability;
    },
    sameToolNamesAs: (other: ToolRegistry): boolean => {
      const theirs = bases.get(other)?.index;
      return other === registry || (theirs !== undefined && index.sameStructureAs(theirs));
    },
    cacheStats: (): ToolSetCacheStats =>
      Object.freeze({ size: cache.size, capacity: cache.capacity, hits: cache.hits, misses: cache.misses }),
  });
  return registry;
}
