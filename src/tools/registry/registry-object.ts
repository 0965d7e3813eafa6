/** The registry object over its parts: lookups, the cached tool sets per (groups, state), the listing. */
import type { FilterOptions, ToolRegistry, ToolSetCacheStats } from './registry-types.js';
import { bases, type Basis } from './registry-basis.js';
import { buildListing, type RegistryListing } from './listing.js';
import { LruCache } from './lru.js';
import {
  type AgentAsk,
  nextState,
  normalizeRequestGroups,
  normalizeRequestState,
  type RequestedGroups,
  type RequestGroups,
  type RequestState,
} from '../../groups/index.js';
import type { Tool } from '../tool.js';
import type { ToolAvailability, ToolIndex } from './tool-index.js';
import type { ToolSet } from './tool-set.js';

/** Default number of (groups, state) tool sets kept per registry. */
export const DEFAULT_TOOL_SET_CACHE_SIZE = 128;

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

/** What a registry holds, and what its methods work from. */
export type RegistryParts = Pick<ToolRegistry, 'workspace' | 'version' | 'tools' | 'toolServices' | 'problems' | 'knownGroups' | 'knownStates' | 'mcp'> & {
  readonly index: ToolIndex;
  readonly shared: Basis['shared'];
  readonly cacheSize: number | undefined;
};

/** The registry object over its parts, with an empty tool-set cache. */
export function assembleRegistry(parts: RegistryParts): ToolRegistry {
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
