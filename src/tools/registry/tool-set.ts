/**
 * The tools one request may use (TG-9, docs/requirements.md): the result of `ToolRegistry.filter`, immutable and shared
 * between requests with the same groups and state. It is applied twice per iteration — to build the
 * prompt and to check the parsed action (design decision 6 (docs/design.md)) — and carries what the audit line needs.
 */
import type { Tool, ToolPromptForm } from '../tool.js';

export interface ToolSet {
  readonly workspace: string;
  /** Version of the registry that produced it. */
  readonly version: number;
  /** The requested groups after defaults, sorted and deduplicated; `["*"]` when `wildcard`. */
  readonly groups: readonly string[];
  /** True when the request asked for `"*"`. */
  readonly wildcard: boolean;
  /** The current state after defaults (`"undefined"` for null or `""`). */
  readonly state: string;
  /** The offered tools, in config-key order (the prompt's order). */
  readonly tools: readonly Tool[];
  /** Names of the offered tools, in the same order (the prompt's `tool_names`, unjoined). */
  readonly names: readonly string[];
  /** The prompt variable `tools`: one `{name, description, arguments}` per offered tool. */
  readonly promptTools: readonly ToolPromptForm[];
  /**
   * Tools left out because none of their groups was requested (checked first), in config-key order. Built on
   * first read (the listing's `offered`, a test): the selection itself builds only the count and the first
   * `LISTED_LEFT_OUT` names, what the audit line reads, so its cost stays linear in the tools.
   */
  readonly filteredByGroup: readonly string[];
  /** Tools in a requested group but not offered in the current state; built on first read, as `filteredByGroup`. */
  readonly filteredByState: readonly string[];
  /** How many tools `filteredByGroup` holds, and its first `LISTED_LEFT_OUT` names. */
  readonly filteredByGroupCount: number;
  readonly filteredByGroupFirst: readonly string[];
  /** How many tools `filteredByState` holds, and its first `LISTED_LEFT_OUT` names. */
  readonly filteredByStateCount: number;
  readonly filteredByStateFirst: readonly string[];
  /** Tools the policy's availability rules withdrew for this request (otherwise offered); absent when none. */
  readonly withdrawn?: readonly string[];
  /** Whether a tool of this name is offered. O(1). */
  has(name: string): boolean;
  /** The offered tool of this name, if any. O(1). */
  get(name: string): Tool | undefined;
  /** Why a tool of the registry is not offered: left out by its groups, or by the state; undefined when offered or unknown. O(1). */
  leftOutBy(name: string): 'group' | 'state' | undefined;
}

/** Left-out names a tool set lists without building its whole lists (`filteredByGroupFirst`, `filteredByStateFirst`). */
export const LISTED_LEFT_OUT = 50;
