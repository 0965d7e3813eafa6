/**
 * Group recommendations (the tool-group spec's §11.3) from what this replica has seen: per workspace and task type
 * (the meta-router's classification; `general` when a request has none), how many conversations ended with an
 * answer, and under which groups and with which tools. Served in the workspace's listing (`/tools/<workspace>`,
 * `recommendations`) so an operator sees which groups a kind of question actually needs, and read by the fallback
 * groups of a policy that says `"recommended"` (security/group-fallback.ts).
 *
 * Counted once per conversation, at its answering iteration (its history names the tools every earlier
 * iteration used, whichever replica ran them). A client chooses its `task_type`, groups and tools, so only what
 * the workspace configures is counted: task types of its `agent-task-type` entries (and `general`, the default),
 * groups and tools it configures. A made-up task type is not counted at all, so none can push a configured one
 * out. Counts age out: each is kept in hourly buckets for `RECOMMENDATION_WINDOW_MS` (a day), so what a client
 * did long ago, or what stopped being true, stops steering the recommendations.
 */

export interface Counted {
  readonly name: string;
  readonly answered: number;
}

export interface TaskTypeRecommendation {
  /** Conversations of this task type that ended with an answer. */
  readonly answered: number;
  /** The groups they ran with, most used first. */
  readonly groups: readonly Counted[];
  /** The tools they used, most used first. */
  readonly tools: readonly Counted[];
}

interface Tally {
  answered: number;
  readonly groups: Map<string, number>;
  readonly tools: Map<string, number>;
}

/** How long an answered conversation counts. */
export const RECOMMENDATION_WINDOW_MS = 24 * 3_600_000;
/** Counts are kept per bucket of this length; a bucket leaves once its end is older than the window. */
const BUCKET_MS = 3_600_000;
/** The task type of a request that names none, always counted. */
const DEFAULT_TASK_TYPE = 'general';

export interface AnswerRecommendationsOptions {
  /** The task types a workspace configures (its `agent-task-type` keys); undefined: none configured yet. */
  taskTypes?: (workspace: string) => Iterable<string> | undefined;
  now?: () => number;
}

export class AnswerRecommendations {
  /** Workspace → task type → bucket start (ms) → tally. */
  private readonly workspaces = new Map<string, Map<string, Map<number, Tally>>>();
  private readonly now: () => number;

  constructor(private readonly options: AnswerRecommendationsOptions = {}) {
    this.now = options.now ?? Date.now;
  }

  /** A conversation of `taskType` ended with an answer, under `groups`, having used `tools` (configured names only). */
  answered(workspace: string, taskType: string, groups: readonly string[], tools: readonly string[]): void {
    if (!this.counts(workspace, taskType)) return;
    const byType = this.workspaces.get(workspace) ?? new Map<string, Map<number, Tally>>();
    this.workspaces.set(workspace, byType);
    const buckets = byType.get(taskType) ?? new Map<number, Tally>();
    byType.set(taskType, buckets);
    const now = this.now();
    dropOld(buckets, now);
    const start = now - (now % BUCKET_MS);
    const tally = buckets.get(start) ?? { answered: 0, groups: new Map(), tools: new Map() };
    buckets.set(start, tally);
    tally.answered += 1;
    for (const group of new Set(groups)) tally.groups.set(group, (tally.groups.get(group) ?? 0) + 1);
    for (const tool of new Set(tools)) tally.tools.set(tool, (tally.tools.get(tool) ?? 0) + 1);
  }

  /** The workspace's recommendations by task type, from the conversations answered within the window. */
  of(workspace: string): Record<string, TaskTypeRecommendation> {
    const byType = this.workspaces.get(workspace) ?? new Map<string, Map<number, Tally>>();
    const now = this.now();
    const out: [string, TaskTypeRecommendation][] = [];
    for (const [type, buckets] of byType) {
      dropOld(buckets, now);
      if (buckets.size === 0 || !this.counts(workspace, type)) continue;
      const total: Tally = { answered: 0, groups: new Map(), tools: new Map() };
      for (const tally of buckets.values()) {
        total.answered += tally.answered;
        for (const [group, n] of tally.groups) total.groups.set(group, (total.groups.get(group) ?? 0) + n);
        for (const [tool, n] of tally.tools) total.tools.set(tool, (total.tools.get(tool) ?? 0) + n);
      }
      out.push([type, { answered: total.answered, groups: ranked(total.groups), tools: ranked(total.tools) }]);
    }
    return Object.fromEntries(out.sort(([a], [b]) => a.localeCompare(b)));
  }

  forget(workspace: string): void {
    this.workspaces.delete(workspace);
  }

  /** Whether conversations of `taskType` are counted in `workspace`: a task type it configures, or `general`. */
  private counts(workspace: string, taskType: string): boolean {
    if (taskType === DEFAULT_TASK_TYPE) return true;
    for (const configured of this.options.taskTypes?.(workspace) ?? []) if (configured === taskType) return true;
    return false;
  }
}

/** Buckets whose whole hour lies before the window are gone. */
function dropOld(buckets: Map<number, Tally>, now: number): void {
  for (const start of buckets.keys()) if (start + BUCKET_MS <= now - RECOMMENDATION_WINDOW_MS) buckets.delete(start);
}

function ranked(counts: ReadonlyMap<string, number>): Counted[] {
  return [...counts].map(([name, answered]) => ({ name, answered })).sort((a, b) => b.answered - a.answered || a.name.localeCompare(b.name));
}
