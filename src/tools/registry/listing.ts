/**
 * A registry as plain JSON, for the HTTP tool listing (TG-20 (docs/requirements.md): "an API listing groups and their tools"):
 * which tools each group holds, which tools each state offers, every tool's normalized configuration,
 * and the problems found while loading.
 *
 * Never config values that may be secrets: a tool-service tool's config params are listed by name and JSON
 * type only (an `api-key` is a config param), and the raw config entries are not served at all.
 */
import type { ArgumentsReport } from '../arguments/argument-source.js';
import type { ToolArgument } from '../arguments/arguments.js';
import { deepFreeze } from '../freeze.js';
import type { Problem } from '../config/problems.js';
import type { Tool, ToolType } from '../tool.js';
import type { ToolIndex } from './tool-index.js';

export interface ListedTool {
  readonly key: string;
  readonly name: string;
  readonly type: ToolType;
  readonly description: string | null;
  readonly groups: readonly string[];
  /** `"*"` when offered in every state. */
  readonly states: '*' | readonly string[];
  readonly nextState: string | null;
  readonly arguments: readonly ToolArgument[];
  /**
   * Type-specific settings after defaults, e.g. `{collection: "default"}`; for a tool-service tool
   * `{service: "joke", configParams: [{name: "style", type: "string"}]}` (names and types, never values).
   */
  readonly settings: Readonly<Record<string, unknown>>;
  /**
   * `mcp-tool` tools when MCP discovery is on: where the arguments came from (`declared`, `discovered`,
   * `none`), the discovery status and the drift between declared arguments and the server's schema.
   */
  readonly mcp?: ArgumentsReport;
}

export interface ListedToolService {
  readonly key: string;
  readonly requestQueue: string;
  readonly responseQueue: string;
  readonly configParams: readonly { readonly name: string; readonly required: boolean }[];
}

export interface RegistryListing {
  readonly workspace: string;
  readonly version: number;
  /** Group → names of its tools, in config-key order. Groups sorted. */
  readonly groups: Readonly<Record<string, readonly string[]>>;
  /** Tools with `group: []`: visible only to requests asking for `"*"`. */
  readonly wildcardOnly: readonly string[];
  /** Known state → names of the tools offered in it (including every-state tools). States sorted. */
  readonly states: Readonly<Record<string, readonly string[]>>;
  /** Tools offered in every state. */
  readonly everyState: readonly string[];
  readonly tools: readonly ListedTool[];
  readonly toolServices: readonly ListedToolService[];
  readonly problems: readonly Problem[];
}

/** The type-specific fields of a tool, as listed. */
export function toolSettings(tool: Tool): Record<string, unknown> {
  switch (tool.type) {
    case 'knowledge-query':
    case 'structured-query':
      return { collection: tool.collection };
    case 'text-completion':
      return {};
    case 'mcp-tool':
      return { mcpTool: tool.mcpTool };
    case 'prompt':
      return { template: tool.template };
    case 'row-embeddings-query':
      return {
        schemaName: tool.schemaName,
        collection: tool.collection,
        indexName: tool.indexName ?? null,
        limit: tool.limit,
      };
    case 'tool-service':
      return {
        service: tool.service.key,
        configParams: Object.entries(tool.serviceConfig).map(([name, value]) => ({ name, type: jsonType(value) })),
      };
  }
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
}

export function listTool(tool: Tool, mcp?: ArgumentsReport): ListedTool {
  const listed: ListedTool = {
    key: tool.key,
    name: tool.name,
    type: tool.type,
    description: tool.description,
    groups: tool.groups,
    states: tool.states === 'all' ? '*' : [...tool.states],
    nextState: tool.nextState ?? null,
    arguments: tool.arguments,
    settings: toolSettings(tool),
  };
  return mcp === undefined ? listed : { ...listed, mcp };
}

export function buildListing(
  registry: {
    readonly workspace: string;
    readonly version: number;
    readonly tools: readonly Tool[];
    readonly toolServices: ReadonlyMap<string, { readonly requestQueue: string; readonly responseQueue: string; readonly configParams: ListedToolService['configParams'] }>;
    readonly problems: readonly Problem[];
    readonly knownStates: ReadonlySet<string>;
    readonly mcp?: ReadonlyMap<string, ArgumentsReport>;
  },
  index: ToolIndex,
): RegistryListing {
  const groups = [...index.groups].sort();
  const states = [...registry.knownStates].sort();
  return deepFreeze({
    workspace: registry.workspace,
    version: registry.version,
    // fromEntries keeps a group named "__proto__" an ordinary key.
    groups: Object.fromEntries(groups.map((group) => [group, index.membersOfGroup(group)])),
    wildcardOnly: registry.tools.filter((tool) => tool.groups.length === 0).map((tool) => tool.name),
    states: Object.fromEntries(states.map((state) => [state, index.offeredInState(state)])),
    everyState: index.offeredInEveryState(),
    tools: registry.tools.map((tool) => listTool(tool, registry.mcp?.get(tool.name))),
    toolServices: [...registry.toolServices].map(([key, service]) => ({
      key,
      requestQueue: service.requestQueue,
      responseQueue: service.responseQueue,
      configParams: service.configParams,
    })),
    problems: registry.problems,
  });
}
