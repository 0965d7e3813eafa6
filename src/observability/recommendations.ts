/**
 * Group recommendations (the tool-group spec's §11.3) from what this replica has seen: per workspace and task type
 * (the meta-router's classification; `general` when a request has none), how many conversations ended with an
 * answer, and under which groups and with which tools. Served in the workspace's listing (`/tools/<workspace>`,
 * `recommendations`) so an operator sees which groups a kind of question actually needs.
 *
 * Counted once per conversation, at its answering iteration (its history names the tools every earlier
 * iteration used, whichever replica ran them). Only configured groups and tools are counted, so a client cannot
 * grow the table with invented names; each replica keeps its own counts since it started.
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

/** Task types kept per workspace: a client chooses `task_type`, so the table is bounded. */
const MAX_TASK_TYPES = 50;
const OVERFLOW_TASK_TYPE = 'other';

export class AnswerRecommendations {
  private readonly workspaces = new Map<string, Map<string, Tally>>();

  /** A conversation of `taskType` ended with an answer, under `groups`, having used `tools` (configured names only). */
  answered(workspace: string, taskType: string, groups: readonly string[], tools: readonly string[]): void {
    const byType = this.workspaces.get(workspace) ?? new Map<string, Tally>();
    this.workspaces.set(workspace, byType);
    const type = byType.has(taskType) || byType.size < MAX_TASK_TYPES ? taskType : OVERFLOW_TASK_TYPE;
    const tally = byType.get(type) ?? { answered: 0, groups: new Map(), tools: new Map() };
    byType.set(type, tally);
    tally.answered += 1;
    for (const group of new Set(groups)) tally.groups.set(group, (tally.groups.get(group) ?? 0) + 1);
    for (const tool of new Set(tools)) tally.tools.set(tool, (tally.tools.get(tool) ?? 0) + 1);
  }

  /** The workspace's recommendations by task type. */
  of(workspace: string): Record<string, TaskTypeRecommendation> {
    const byType = this.workspaces.get(workspace) ?? new Map<string, Tally>();
    return Object.fromEntries(
      [...byType].sort(([a], [b]) => a.localeCompare(b)).map(([type, tally]) => [type, { answered: tally.answered, groups: ranked(tally.groups), tools: ranked(tally.tools) }]),
    );
  }

  forget(workspace: string): void {
    this.workspaces.delete(workspace);
  }
}

function ranked(counts: ReadonlyMap<string, number>): Counted[] {
  return [...counts].map(([name, answered]) => ({ name, answered })).sort((a, b) => b.answered - a.answered || a.name.localeCompare(b.name));
}
