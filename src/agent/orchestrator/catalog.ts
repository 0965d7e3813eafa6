/**
 * The orchestrator's runtime config: the `agent-pattern` and `agent-task-type` config types, one entry per
 * pattern and per task type, each a JSON object (`tg-put-config-item`). TrustGraph's meta-router reads them
 * the same way: an entry that is not JSON stands for itself (`{"name": <key>}`), and a workspace without
 * entries routes every question to `react` / `general`.
 *
 *   agent-pattern:    {"name", "description", "max_replan_depth"? (plan-then-execute), "max_subagents"? (supervisor)}
 *   agent-task-type:  {"name", "description", "valid_patterns": [pattern ids], "framing": text}
 */
import type { TypeValues } from '../../config/index.js';

export const PATTERN_CONFIG_TYPES = ['agent-pattern', 'agent-task-type'] as const;

/** The pattern a workspace without `agent-pattern` entries offers, and TrustGraph's fallback. */
export const DEFAULT_PATTERN = 'react';
export const DEFAULT_TASK_TYPE = 'general';
/** TrustGraph's supervisor fans out at most this many subagents (its `MAX_SUBAGENTS`). */
export const DEFAULT_MAX_SUBAGENTS = 5;
/** Re-plans a plan-then-execute conversation may make after a refused or failed step. */
export const DEFAULT_MAX_REPLAN_DEPTH = 2;

export interface PatternEntry {
  readonly id: string;
  readonly description: string;
  readonly maxReplanDepth: number;
  readonly maxSubagents: number;
}

export interface TaskTypeEntry {
  readonly id: string;
  readonly description: string;
  /** Absent: every configured pattern. */
  readonly validPatterns: readonly string[] | undefined;
  readonly framing: string;
}

export interface PatternCatalog {
  /** The workspace has `agent-pattern` or `agent-task-type` entries (else the defaults stand in). */
  readonly configured: boolean;
  /** The patterns the workspace's `agent-pattern` entries name; undefined when it has none. */
  readonly listedPatterns: ReadonlySet<string> | undefined;
  readonly patterns: ReadonlyMap<string, PatternEntry>;
  readonly taskTypes: ReadonlyMap<string, TaskTypeEntry>;
  /** Entries that could not be read as intended, for the log. */
  readonly problems: readonly string[];
}

function record(value: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(value);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const text = (v: unknown, fallback: string): string => (typeof v === 'string' ? v : fallback);

function positiveInt(v: unknown, fallback: number, what: string, problems: string[]): number {
  if (v === undefined) return fallback;
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n === 'number' && Number.isInteger(n) && n >= 0) return n;
  problems.push(`${what} must be a whole number >= 0, not ${JSON.stringify(v)}; using ${fallback}`);
  return fallback;
}

/**
 * Build one workspace's catalog from its `agent-pattern` / `agent-task-type` values; `runnable` are the patterns
 * this agent runs (an entry naming another is reported). Never throws.
 */
export function buildPatternCatalog(runnable: readonly string[], patternValues: TypeValues = {}, taskTypeValues: TypeValues = {}): PatternCatalog {
  const problems: string[] = [];
  const configured = Object.keys(patternValues).length + Object.keys(taskTypeValues).length > 0;
  const patterns = new Map<string, PatternEntry>();
  for (const [id, value] of Object.entries(patternValues)) {
    const data = record(value);
    if (!data) problems.push(`agent-pattern ${id} is not a JSON object; it stands for the pattern "${id}" without a description`);
    if (!runnable.includes(id)) problems.push(`agent-pattern ${id} is not a pattern this agent runs (${runnable.join(', ')}); questions routed to it run react`);
    patterns.set(id, {
      id,
      description: text(data?.description, id),
      maxReplanDepth: positiveInt(data?.max_replan_depth, DEFAULT_MAX_REPLAN_DEPTH, `agent-pattern ${id}: max_replan_depth`, problems),
      maxSubagents: Math.max(1, positiveInt(data?.max_subagents, DEFAULT_MAX_SUBAGENTS, `agent-pattern ${id}: max_subagents`, problems)),
    });
  }
  const taskTypes = new Map<string, TaskTypeEntry>();
  for (const [id, value] of Object.entries(taskTypeValues)) {
    const data = record(value);
    if (!data) problems.push(`agent-task-type ${id} is not a JSON object; it stands for the task type "${id}" without framing`);
    const valid = data?.valid_patterns;
    const validPatterns = Array.isArray(valid) ? valid.filter((p): p is string => typeof p === 'string') : undefined;
    if (valid !== undefined && !Array.isArray(valid)) problems.push(`agent-task-type ${id}: valid_patterns must be a list of pattern ids`);
    taskTypes.set(id, { id, description: text(data?.description, id), validPatterns, framing: text(data?.framing, '') });
  }
  if (patterns.size === 0) {
    patterns.set(DEFAULT_PATTERN, {
      id: DEFAULT_PATTERN,
      description: 'Interleaved reasoning and action',
      maxReplanDepth: DEFAULT_MAX_REPLAN_DEPTH,
      maxSubagents: DEFAULT_MAX_SUBAGENTS,
    });
  }
  if (taskTypes.size === 0) {
    taskTypes.set(DEFAULT_TASK_TYPE, { id: DEFAULT_TASK_TYPE, description: 'General queries', validPatterns: [DEFAULT_PATTERN], framing: '' });
  }
  const listedPatterns = Object.keys(patternValues).length > 0 ? new Set(Object.keys(patternValues)) : undefined;
  return { configured, listedPatterns, patterns, taskTypes, problems };
}

/** The limits of a pattern: its entry's, or the defaults when the workspace does not configure it. */
export function patternLimits(catalog: PatternCatalog, pattern: string): { maxReplanDepth: number; maxSubagents: number } {
  const entry = catalog.patterns.get(pattern);
  return { maxReplanDepth: entry?.maxReplanDepth ?? DEFAULT_MAX_REPLAN_DEPTH, maxSubagents: entry?.maxSubagents ?? DEFAULT_MAX_SUBAGENTS };
}
