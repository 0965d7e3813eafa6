/**
 * The workflow linter run on every change of a workspace's tools or group policy: each finding logged once
 * (when it first appears; a finding that goes and comes back is logged again), the counts per severity
 * reported (the `tg_agent_workflow_findings` gauge), the latest findings kept for the HTTP listing.
 *
 * A check runs in time slices (time-slices.ts), never in a request's way: requests are served between its
 * slices, by the registry already in place, and its findings arrive when it ends, after the registry they
 * are about. A newer check of the same workspace (the next reload, a policy change) abandons the one under
 * way, which then reports nothing; so do `forget` and a workspace's deletion.
 */
import type { Logger } from 'pino';
import type { GroupPolicy } from '../groups/index.js';
import { CHEAP_ITEMS_PER_STEP, runInSlices, type Steps, whileCurrent } from '../threads/index.js';
import type { ToolRegistry } from '../tools/index.js';
import { type Finding, lintWorkflowSteps, type Severity } from './workflow-lint.js';

export interface WorkflowChecksOptions {
  logger: Logger;
  policyOf(workspace: string): GroupPolicy | undefined;
  onCounts?(workspace: string, counts: Readonly<Record<Severity, number>>): void;
  /** Time budget of one slice, ms (time-slices.ts's default when absent). */
  sliceMs?: number;
}

/** New findings logged one by one per check; past this, one line says how many more the listing holds. */
export const MAX_LOGGED_FINDINGS = 100;

const LOG_LEVEL: Record<Severity, 'error' | 'warn' | 'info'> = { error: 'error', warning: 'warn', info: 'info' };

interface Run {
  readonly id: number;
  done: Promise<readonly Finding[] | undefined>;
}

export class WorkflowChecks {
  private readonly findings = new Map<string, readonly Finding[]>();
  /** The check under way per workspace. */
  private readonly runs = new Map<string, Run>();
  private lastRun = 0;

  constructor(private readonly options: WorkflowChecksOptions) {}

  /**
   * Check the workspace's registry with its current policy, in time slices. Resolves with the findings, or
   * with undefined when a newer check of the workspace (or `forget`) abandoned this one. Never rejects.
   */
  check(registry: ToolRegistry): Promise<readonly Finding[] | undefined> {
    const { workspace } = registry;
    const run: Run = { id: ++this.lastRun, done: Promise.resolve(undefined) };
    const current = (): boolean => this.runs.get(workspace) === run;
    this.runs.set(workspace, run);
    run.done = runInSlices(whileCurrent(this.steps(registry, this.options.policyOf(workspace)), current), this.options.sliceMs)
      .catch((error: unknown) => {
        this.options.logger.error({ err: error, workspace }, 'Workflow checks failed; the findings listed are those of the previous check');
        return undefined;
      })
      .finally(() => {
        if (current()) this.runs.delete(workspace);
      });
    return run.done;
  }

  /** Whether a check of the workspace is under way (its findings are not in yet). */
  pending(workspace: string): boolean {
    return this.runs.has(workspace);
  }

  /** Resolves once no check of the workspace is under way. */
  async settled(workspace: string): Promise<void> {
    for (let run = this.runs.get(workspace); run !== undefined; run = this.runs.get(workspace)) await run.done;
  }

  findingsOf(workspace: string): readonly Finding[] {
    return this.findings.get(workspace) ?? [];
  }

  /** Drop the workspace's findings; a check of it under way is abandoned. */
  forget(workspace: string): void {
    this.runs.delete(workspace);
    this.findings.delete(workspace);
    this.options.onCounts?.(workspace, { error: 0, warning: 0, info: 0 });
  }

  private *steps(registry: ToolRegistry, policy: GroupPolicy | undefined): Steps<readonly Finding[]> {
    const { workspace } = registry;
    const found = yield* lintWorkflowSteps(registry, policy);
    const before = new Set<string>();
    const previous = this.findings.get(workspace) ?? [];
    for (let i = 0; i < previous.length; i++) {
      before.add(previous[i]!.message);
      if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
    }
    const counts: Record<Severity, number> = { error: 0, warning: 0, info: 0 };
    const fresh: Finding[] = [];
    for (let i = 0; i < found.length; i++) {
      counts[found[i]!.severity]++;
      if (!before.has(found[i]!.message)) fresh.push(found[i]!);
      if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
    }
    // Logged in the step that makes them the workspace's findings: a check abandoned before logs nothing.
    for (const item of fresh.slice(0, MAX_LOGGED_FINDINGS)) {
      this.options.logger[LOG_LEVEL[item.severity]]({ workspace, check: item.check, severity: item.severity }, `Workflow ${item.severity}: ${item.message}`);
    }
    if (fresh.length > MAX_LOGGED_FINDINGS) {
      this.options.logger.warn(
        { workspace, unlogged: fresh.length - MAX_LOGGED_FINDINGS },
        `${fresh.length - MAX_LOGGED_FINDINGS} more new workflow findings are not logged one by one: they are listed at /tools/${encodeURIComponent(workspace)}`,
      );
    }
    this.findings.set(workspace, found);
    this.options.onCounts?.(workspace, counts);
    return found;
  }
}
