/**
 * Turns one iteration's events into metrics and one audit line. Created per consumed request.
 */
import type { Failure, IterationResult, PlanStepRefusal, SessionOutcome, UndeclaredAction } from '../agent/index.js';
import type { AgentAsk, ToolWithdrawal, Withdrawal } from '../groups/index.js';
import type { FlowDefinition } from '../config/index.js';
import type { Refusal, RequestTelemetry } from '../flow/index.js';
import type { Tool, ToolSet } from '../tools/index.js';
import type { AuditDenial, AuditRecord, AuditTrail } from './audit.js';
import { OTHER, type AgentMetrics } from './metrics.js';
import { firstNames } from '../errors/index.js';
import type { AnswerRecommendations } from './recommendations.js';

/**
 * Tool names (and group names) listed per list in one audit line; the counts are always exact. With thousands of
 * tools, listing them all made each line ~100 KiB (bench/iteration.ts).
 */
// The left-out lists come from the tool set's first LISTED_LEFT_OUT names (tools/registry/tool-set.ts): at least this many.
export const MAX_LISTED_TOOLS = 50;
/** Longest session id written to an audit line. */
const MAX_AUDITED_SESSION_ID = 256;
/** Longer argument names are cut in the audit line (the model writes them). */
const MAX_NAME = 200;
/** Groups of one request counted in pairs (`tg_agent_group_pair_requests_total`): 8 make 28 pairs at most. */
const MAX_PAIRED_GROUPS = 8;

/** A session id as the audit line carries it: cut after MAX_AUDITED_SESSION_ID characters. */
function audited(sessionId: string): string {
  return sessionId.length <= MAX_AUDITED_SESSION_ID ? sessionId : `${sessionId.slice(0, MAX_AUDITED_SESSION_ID)}…`;
}

export class IterationRecorder implements RequestTelemetry {
  private readonly startedAt = new Date();
  private readonly started = performance.now();
  private readonly record: AuditRecord;
  private finished = false;

  constructor(
    private readonly metrics: AgentMetrics,
    private readonly audit: AuditTrail | undefined,
    flow: FlowDefinition,
    /** Undefined when the request could not be decoded (it is audited all the same). */
    private readonly ask: AgentAsk | undefined,
    id: string,
    private readonly recommendations?: AnswerRecommendations,
  ) {
    const request = ask?.request;
    const state = ask?.state ?? '';
    this.record = {
      audit: 'agent-iteration',
      request_id: id,
      workspace: flow.workspace,
      flow: flow.flow,
      session_id: audited(request?.session_id ?? ''),
      iteration: request ? request.history.length + 1 : 0,
      requested_groups: request?.group ? firstNames(request.group, MAX_LISTED_TOOLS) : null,
      ...(request?.group && request.group.length > MAX_LISTED_TOOLS ? { requested_groups_count: request.group.length } : {}),
      effective_groups: ask ? firstNames(ask.groups.groups, MAX_LISTED_TOOLS) : [],
      initial_state: state,
      final_state: state,
      transitions: [],
      offered_tools: [],
      filtered_by_group: [],
      filtered_by_state: [],
      filtered_by_group_count: 0,
      filtered_by_state_count: 0,
      action: null,
      tools_used: [],
      denials: [],
      undeclared_arguments: [],
      undeclared_arguments_count: 0,
      outcome: 'error',
      error: null,
      failure: null,
      started_at: this.startedAt.toISOString(),
      execution_ms: 0,
      ...(request && request.pattern !== '' ? { pattern: request.pattern, task_type: request.task_type } : {}),
    };
  }

  sessionNamed(sessionId: string): void {
    this.record.session_id = audited(sessionId);
  }

  patternChosen(pattern: string, taskType: string, routed: boolean): void {
    this.metrics.patternChosen.inc({ pattern: this.metrics.pattern(pattern), routed: String(routed) });
    Object.assign(this.record, { pattern, task_type: taskType, routed });
  }

  planCreated(steps: number, replan: number): void {
    this.metrics.planSteps.observe(steps);
    if (replan > 0) this.metrics.replans.inc();
    this.record.plan = { steps, replan };
  }

  subagentsFannedOut(count: number): void {
    this.metrics.subagents.observe(count);
    this.record.subagents = count;
  }

  planStepRefused(refusal: PlanStepRefusal): void {
    this.metrics.planStepsRefused.inc({ tool: this.metrics.tool(refusal.tool), at: refusal.at });
    this.deny({
      kind: 'plan-step-refused',
      tool: refusal.tool,
      reason: refusal.at,
      detail: `step ${refusal.step} in state "${refusal.state}"; then ${refusal.then === 'replan' ? 'a new plan' : 'the refusal became the step result'}`,
    });
  }

  toolsOffered(toolSet: ToolSet): void {
    Object.assign(this.record, {
      offered_tools: [...toolSet.names],
      filtered_by_group: toolSet.filteredByGroupFirst.slice(0, MAX_LISTED_TOOLS),
      filtered_by_state: toolSet.filteredByStateFirst.slice(0, MAX_LISTED_TOOLS),
      filtered_by_group_count: toolSet.filteredByGroupCount,
      filtered_by_state_count: toolSet.filteredByStateCount,
      effective_groups: firstNames([...toolSet.groups], MAX_LISTED_TOOLS),
    });
    if (this.ask?.request.history.length === 0) {
      for (const group of toolSet.groups) this.metrics.groupRequests.inc({ group: this.metrics.group(group) });
      this.countGroupPairs(toolSet.groups);
    }
    this.metrics.offeredTools.observe(toolSet.tools.length);
    for (const name of toolSet.names) this.metrics.toolOffers.inc({ tool: this.metrics.tool(name) });
  }

  /** Which groups are requested together: each pair of a request's first 8 groups once, as label values. */
  private countGroupPairs(groups: Iterable<string>): void {
    const labels = [...new Set([...groups].filter((g) => g !== '*').slice(0, MAX_PAIRED_GROUPS).map((g) => this.metrics.group(g)))].sort();
    for (let i = 0; i < labels.length; i++) {
      for (let j = i + 1; j < labels.length; j++) this.metrics.groupPairs.inc({ group: labels[i]!, with: labels[j]! });
    }
  }

  llmFinished(seconds: number): void {
    this.metrics.llmDuration.observe(seconds);
  }

  actionDenied(name: string, _toolSet: ToolSet, known: boolean): void {
    this.metrics.toolDenied.inc({ tool: this.metrics.tool(name) });
    this.deny({ kind: 'tool-not-offered', tool: name, detail: known ? 'configured but not offered' : 'no such tool' });
  }

  argumentsInvalid(tool: Tool, problems: readonly string[]): void {
    this.metrics.argumentFailures.inc({ tool: this.metrics.tool(tool.name) });
    this.deny({ kind: 'invalid-arguments', tool: tool.name, detail: problems.join('; ') });
  }

  argumentsUndeclared(tool: Tool, names: readonly string[], action: UndeclaredAction): void {
    this.metrics.undeclaredArguments.inc({ tool: this.metrics.tool(tool.name), action }, names.length);
    const listed = this.record.undeclared_arguments;
    for (const name of names.slice(0, Math.max(0, MAX_LISTED_TOOLS - listed.length))) {
      listed.push({ tool: tool.name, argument: name.length > MAX_NAME ? `${name.slice(0, MAX_NAME)}…` : name, action });
    }
    this.record.undeclared_arguments_count += names.length;
  }

  toolFinished(tool: Tool, seconds: number, error: string | undefined): void {
    const labels = { tool: this.metrics.tool(tool.name) };
    this.metrics.toolInvocations.inc(labels);
    this.metrics.toolDuration.observe(labels, seconds);
    if (error !== undefined) this.metrics.toolErrors.inc(labels);
    this.record.tools_used.push({ tool: tool.name, groups: [...tool.groups], ok: error === undefined });
  }

  stateTransition(tool: Tool, from: string, to: string): void {
    this.metrics.stateTransitions.inc({
      tool: this.metrics.tool(tool.name),
      from: this.metrics.state(from),
      to: this.metrics.state(to),
    });
    this.record.transitions.push({ tool: tool.name, from, to, at: new Date().toISOString() });
  }

  sessionEnded(outcome: SessionOutcome, iterations: number): void {
    this.metrics.sessions.inc({ outcome });
    if (outcome !== 'error') this.metrics.iterationCount.observe(iterations);
  }

  stateUnknown(state: string): void {
    this.metrics.invalidStates.inc({ state: this.metrics.state(state) });
  }

  groupsWithdrawn(withdrawals: readonly Withdrawal[]): void {
    for (const { group, reason } of withdrawals) this.metrics.groupsWithdrawn.inc({ group: this.metrics.group(group), reason });
    this.record.withdrawn_groups = withdrawals.slice(0, 20);
  }

  toolsWithdrawn(withdrawals: readonly ToolWithdrawal[]): void {
    for (const { tool, reason } of withdrawals) this.metrics.toolsWithdrawn.inc({ tool: this.metrics.tool(tool), reason });
    this.record.withdrawn_tools = withdrawals.slice(0, 20);
  }

  groupsFellBack(groups: readonly string[]): void {
    for (const group of groups) this.metrics.groupFallbacks.inc({ group: this.metrics.group(group) });
    this.record.fallback_groups = groups.slice(0, 20);
  }

  groupsUnknown(groups: readonly string[], action: 'ignored' | 'warned' | 'rejected'): void {
    this.metrics.unknownGroups.inc({ action });
    this.record.unknown_groups = firstNames(groups, 20);
  }

  refused(refusal: Refusal): void {
    this.metrics.refusals.inc({ reason: refusal.reason });
    if (refusal.escalation) this.metrics.escalationAttempts.inc({ reason: refusal.escalation });
    for (const group of refusal.deniedGroups ?? []) this.metrics.groupAccessDenied.inc({ group: this.metrics.group(group) });
    this.deny({ kind: refusal.kind, reason: refusal.reason, detail: refusal.message });
    this.metrics.sessions.inc({ outcome: 'error' });
    this.finish('refused', refusal.message);
  }

  failed(failure: Failure): void {
    this.metrics.iterationFailures.inc({ reason: failure.reason });
    this.record.failure = failure.reason;
  }

  done(result: IterationResult): void {
    this.record.action = result.action ?? null;
    this.record.final_state = result.stateAfter ?? result.stateBefore;
    if (result.outcome === 'answer') this.answered(result);
    this.finish(result.outcome, result.error ?? null);
  }

  /** A conversation ended with its answer: what it ran with, for the recommendations (configured names only). */
  private answered(result: IterationResult): void {
    if (!this.recommendations || !this.ask) return;
    const { request, groups } = this.ask;
    const tools = [...request.history.map((step) => step.action), result.action ?? ''].filter((name) => name !== '' && this.metrics.tool(name) !== OTHER);
    const named = groups.wildcard ? ['*'] : groups.groups.filter((group) => this.metrics.group(group) !== OTHER);
    // The task type the meta-router chose in this iteration, else the one the conversation carries.
    this.recommendations.answered(this.record.workspace, this.record.task_type || request.task_type || 'general', named, tools);
  }

  private deny(denial: Omit<AuditDenial, 'at'>): void {
    this.record.denials.push({ ...denial, at: new Date().toISOString() });
  }

  /** Writes the audit line; only the first call counts (a refusal finishes before the handling ends). */
  private finish(outcome: AuditRecord['outcome'], error: string | null): void {
    if (this.finished) return;
    this.finished = true;
    const seconds = (performance.now() - this.started) / 1000;
    this.metrics.stateDuration.observe({ state: this.metrics.state(this.record.initial_state) }, seconds);
    this.record.outcome = outcome;
    this.record.error = error;
    this.record.execution_ms = Math.round(seconds * 1000 * 100) / 100;
    this.audit?.record(this.record);
  }
}
