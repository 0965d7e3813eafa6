/** The `group` of each `mcp` entry, which the tools built on it inherit when they name none (groups/inheritance.ts). */
import { z } from 'zod';
import { decodeEntry } from './config-entry.js';
import { stringList } from './tool-config-schema.js';

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
