/**
 * The workflow linter run on every change of a workspace's tools or group policy: each finding logged once
 * (when it first appears; a finding that goes and comes back is logged again), the counts per severity
 * reported (the `tg_agent_workflow_findings` gauge), the latest findings kept for the HTTP listing.
 */
import type { Logger } from 'pino';
import type { GroupPolicy } from '../groups/index.js';
import type { ToolRegistry } from '../tools/index.js';
import { lintWorkflow, type Finding, type Severity } from './workflow-lint.js';

export interface WorkflowChecksOptions {
  logger: Logger;
  policyOf(workspace: string): GroupPolicy | undefined;
  onCounts?(workspace: string, counts: Readonly<Record<Severity, number>>): void;
}

const LOG_LEVEL: Record<Severity, 'error' | 'warn' | 'info'> = { error: 'error', warning: 'warn', info: 'info' };

export class WorkflowChecks {
  private readonly findings = new Map<string, readonly Finding[]>();

  constructor(private readonly options: WorkflowChecksOptions) {}

  /** Lint the workspace's registry with its current policy; returns the findings. */
  check(registry: ToolRegistry): readonly Finding[] {
    const { workspace } = registry;
    const found = lintWorkflow(registry, this.options.policyOf(workspace));
    const before = new Set((this.findings.get(workspace) ?? []).map((f) => f.message));
    for (const item of found) {
      if (before.has(item.message)) continue;
      this.options.logger[LOG_LEVEL[item.severity]]({ workspace, check: item.check, severity: item.severity }, `Workflow ${item.severity}: ${item.message}`);
    }
    this.findings.set(workspace, found);
    const counts: Record<Severity, number> = { error: 0, warning: 0, info: 0 };
    for (const item of found) counts[item.severity]++;
    this.options.onCounts?.(workspace, counts);
    return found;
  }

  findingsOf(workspace: string): readonly Finding[] {
    return this.findings.get(workspace) ?? [];
  }

  forget(workspace: string): void {
    this.findings.delete(workspace);
    this.options.onCounts?.(workspace, { error: 0, warning: 0, info: 0 });
  }
}
