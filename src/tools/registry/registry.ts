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
import { loadTool } from '../config/load-tool.js';
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

/** The build, as steps: yields between entries and between passes. */
function* registrySteps(input: BuildRegistryInput): Steps<BuildRegistryResult> {
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

  const loadedTools: Tool[] = [];
  const mcpReports = new Map<Tool, ArgumentsReport>();
  const session = input.loadCache?.begin(servicesFingerprint(input.toolServices), input.mcp);
  const toolEntries = yield* entriesOf(workspace, 'tool', input.tools, problems);
  yield;
  for (const [key, raw] of toolEntries) {
    let loaded = session?.get(key, raw);
    if (!loaded) {
      try {
        loaded = loadTool(workspace, key, raw, { services, invalid: invalidServices }, input.mcp);
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
  const cache = new LruCache<string, ToolSet>(cacheCapacity(input.cacheSize));
  const frozenProblems = yield* deepFreezeSteps(problems);
  let listing: RegistryListing | undefined;
  let availability: ToolAvailability | undefined;
  yield;

  const registry: ToolRegistry = Object.freeze({
    workspace,
    version,
    tools,
    toolServices: frozenMap(services),
    problems: frozenProblems,
    knownGroups: frozenSet([DEFAULT_GROUP, ...index.groups]),
    knownStates: frozenSet([DEFAULT_STATE, ...index.states]),
    mcp: mcpByName,
    // The winners are the tools by name; the map never leaves this closure, so it needs no copy or freezing.
    get: (name: string) => winners.get(name),
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
      availability ??= index.availability(registry.knownGroups, registry.knownStates);
      return availability;
    },
    cacheStats: (): ToolSetCacheStats =>
      Object.freeze({ size: cache.size, capacity: cache.capacity, hits: cache.hits, misses: cache.misses }),
  });
  return { registry, problems: frozenProblems };
}
