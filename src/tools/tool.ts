/**
 * A tool as the agent uses it: validated, normalized and frozen. Produced by `load-tool.ts`, held by
 * the registry. Defaults are applied (TrustGraph's): groups `["default"]`, every state, collection
 * `"default"`, limit 10.
 */
import type { ArgumentValidator, PromptArgument, ToolArgument } from './arguments/arguments.js';
import type { ToolType } from './config/tool-config-schema.js';
import type { ToolStates } from '../groups/index.js';

export type { ArgumentType, ToolType } from './config/tool-config-schema.js';

export type { ToolStates };

/** A tool's entry in the prompt variable `tools` (docs/trustgraph-agent-notes.md §3.2), with `required` added per argument. */
export interface ToolPromptForm {
  readonly name: string;
  readonly description: string | null;
  readonly arguments: readonly PromptArgument[];
}

interface ToolCommon<T extends ToolType> {
  /** The config key (orders tools; TrustGraph's tool id). */
  readonly key: string;
  readonly type: T;
  /** The name the LLM writes after `Action:`; unique within a registry. */
  readonly name: string;
  readonly description: string | null;
  /** Group membership, deduplicated, in configured order; `[]` means visible only to `"*"` requests. */
  readonly groups: readonly string[];
  readonly states: ToolStates;
  /** The state to move to after a successful run; undefined keeps the current state (TG-7, docs/requirements.md). */
  readonly nextState: string | undefined;
  /** The arguments shown to the LLM: the configured ones, or the type's fixed ones. */
  readonly arguments: readonly ToolArgument[];
  /** Precompiled validator for `arguments`. */
  readonly validator: ArgumentValidator;
  /** Precomputed prompt form. */
  readonly prompt: ToolPromptForm;
  /** The whole parsed config entry (frozen), for tool implementations. */
  readonly config: Readonly<Record<string, unknown>>;
}

export interface KnowledgeQueryTool extends ToolCommon<'knowledge-query'> {
  /** Configured collection, `"default"` when absent (the request's collection is never used). */
  readonly collection: string;
}

export type TextCompletionTool = ToolCommon<'text-completion'>;

export interface McpTool extends ToolCommon<'mcp-tool'> {
  /** Key of the MCP server entry in config type `mcp` (config key `mcp-tool`). */
  readonly mcpTool: string;
}

export interface PromptTool extends ToolCommon<'prompt'> {
  /** Prompt template id. */
  readonly template: string;
}

export interface StructuredQueryTool extends ToolCommon<'structured-query'> {
  readonly collection: string;
}

export interface RowEmbeddingsQueryTool extends ToolCommon<'row-embeddings-query'> {
  readonly schemaName: string;
  readonly collection: string;
  /** Index within the schema; undefined searches every index (the request omits `index_name`). */
  readonly indexName: string | undefined;
  /** Maximum matches, a positive integer (default 10). */
  readonly limit: number;
}

/** A normalized `tool-service` descriptor. */
export interface ToolServiceDescriptor {
  /** Its config key, which tools name in `service`. */
  readonly key: string;
  readonly requestQueue: string;
  readonly responseQueue: string;
  readonly configParams: readonly { readonly name: string; readonly required: boolean }[];
  /** The entry's `group`: the groups of its tools that name none of their own. */
  readonly groups?: readonly string[];
  /** The whole parsed config entry (frozen). */
  readonly config: Readonly<Record<string, unknown>>;
}

export interface ToolServiceTool extends ToolCommon<'tool-service'> {
  readonly service: ToolServiceDescriptor;
  /** The values of the service's config params present on the tool entry, JSON types kept. */
  readonly serviceConfig: Readonly<Record<string, unknown>>;
}

/** Any tool; switch on `type` to reach the type-specific fields. */
export type Tool =
  | KnowledgeQueryTool
  | TextCompletionTool
  | McpTool
  | PromptTool
  | StructuredQueryTool
  | RowEmbeddingsQueryTool
  | ToolServiceTool;
