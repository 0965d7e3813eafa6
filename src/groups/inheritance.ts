/**
 * Group inheritance (the tool-group spec's open question; TrustGraph has no such field): a `group` on a
 * `tool-service` entry or an `mcp` entry is the groups of every tool built on it that names no `group` of its own.
 * A tool's own `group`, even `[]`, always wins.
 */
import { z } from 'zod';
import { decodeEntry } from '../tools/config/config-entry.js';
import { stringList } from '../tools/config/tool-config-schema.js';
import type { ToolConfig } from '../tools/config/tool-config-schema.js';

/** Where inherited groups come from. */
export interface GroupSources {
  readonly services: ReadonlyMap<string, { readonly groups?: readonly string[] }>;
  /** `mcp` entry key → its `group`, for the entries that have one. */
  readonly mcpGroups?: ReadonlyMap<string, readonly string[]>;
}

const GroupField = z.looseObject({ group: stringList('group names').nullable().optional() });

/**
 * `mcp` entry key → its `group`, for the entries that have one. An entry that is not valid JSON or has a bad
 * `group` is left out here: the mcp config's own checks report it (MCP discovery, the listing).
 */
export function mcpGroupsOf(values: Readonly<Record<string, unknown>> | null | undefined): ReadonlyMap<string, readonly string[]> {
  const groups = new Map<string, readonly string[]>();
  for (const [key, raw] of Object.entries(values ?? {})) {
    const decoded = decodeEntry(raw);
    if (!decoded.ok) continue;
    const parsed = GroupField.safeParse(decoded.value);
    if (parsed.success && parsed.data.group) groups.set(key, Object.freeze([...new Set(parsed.data.group)]));
  }
  return groups;
}

/** The groups a tool without its own `group` takes from its `tool-service` or `mcp` entry, if that has one. */
export function inheritedGroups(config: ToolConfig, sources: GroupSources): readonly string[] | undefined {
  if (config.type === 'tool-service') return sources.services.get(config.service)?.groups;
  if (config.type === 'mcp-tool') return sources.mcpGroups?.get(config['mcp-tool']);
  return undefined;
}
