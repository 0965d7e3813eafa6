/**
 * The types of a workspace's tool registry (registry.ts builds one, registry-patch.ts patches one,
 * registry-object.ts assembles the object): in a file of their own, so that those modules share them without
 * importing each other.
 */
import type { ArgumentSource, ArgumentsReport } from '../arguments/argument-source.js';
import type { ToolLoadCache } from '../loading/tool-load-cache.js';
import type { Problem } from '../config/problems.js';
import type { AgentAsk, RequestGroups, RequestState } from '../../groups/index.js';
import type { Tool, ToolServiceDescriptor } from '../tool.js';
import type { RegistryListing } from './listing.js';
import type { ToolAvailability } from './tool-index.js';
import type { ToolSet } from './tool-set.js';

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
