/**
 * Group inheritance (the tool-group spec's open question; TrustGraph has no such field): a `group` on a
 * `tool-service` entry or an `mcp` entry is the groups of every tool built on it that names no `group` of its own.
 * A tool's own `group`, even `[]`, always wins.
 */

/** Where inherited groups come from. */
export interface GroupSources {
  readonly services: ReadonlyMap<string, { readonly groups?: readonly string[] }>;
  /** `mcp` entry key → its `group`, for the entries that have one (tools/config/mcp-groups.ts reads them). */
  readonly mcpGroups?: ReadonlyMap<string, readonly string[]>;
}

/** What inheritance reads of a tool's config: its type, and the entry it is built on. */
export interface InheritingTool {
  readonly type: string;
  /** A `tool-service` tool's entry in config type `tool-service`. */
  readonly service?: string;
  /** An `mcp-tool` tool's entry in config type `mcp`. */
  readonly 'mcp-tool'?: string;
}

/** The groups a tool without its own `group` takes from its `tool-service` or `mcp` entry, if that has one. */
export function inheritedGroups(config: InheritingTool, sources: GroupSources): readonly string[] | undefined {
  if (config.type === 'tool-service' && config.service !== undefined) return sources.services.get(config.service)?.groups;
  if (config.type === 'mcp-tool' && config['mcp-tool'] !== undefined) return sources.mcpGroups?.get(config['mcp-tool']);
  return undefined;
}
