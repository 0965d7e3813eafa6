/**
 * Prometheus metrics on a dedicated prom-client registry. Two families:
 *
 * - TrustGraph's own names and labels (docs/trustgraph-wire-notes.md §3.5, docs/trustgraph-agent-notes.md §3.13), so its Grafana dashboards keep working:
 *   `tg_agent_session_total`, `tg_agent_iteration_count`, `tg_agent_tool_*`, `tg_agent_llm_duration_seconds`,
 *   `tg_consumer_*`, `tg_producer_messages_total`, `tg_config_version`, label `processor`.
 * - The tool-group spec's nine metrics (its spec §8.1 (docs/requirements.md) names, e.g. `agent_tool_group_requests_total`) with TrustGraph's
 *   `tg_` prefix, plus denials, argument failures and readiness.
 *
 * Label values for groups, states and tools come only from configuration (anything else is `other`), so a
 * client cannot create series by sending made-up names (design decision 11 (docs/design.md)).
 */
import { FAILURE_REASONS, PATTERN_IDS } from '../agent/index.js';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';
import { DISCOVERY_FAILURE_REASONS, type DiscoveryFailureReason } from '../mcp/index.js';
import type { ToolRegistry } from '../tools/index.js';
import { RECORD_REFUSALS } from '../security/index.js';
import { KnownLabelValues, removeSeries, type LabelKind } from './known-label-values.js';
import { ScrapeGauges } from './scrape-gauges.js';

export const OTHER = 'other';

/** TrustGraph's LLM buckets (0.25 … 120 s). */
const LLM_BUCKETS = [0.25, 0.5, 1, 2, 4, 8, 15, 30, 45, 60, 90, 120];
const ITERATION_BUCKETS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20];
const CONSUMER_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30];
const TOOL_COUNT_BUCKETS = [0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89];
const STATE_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
const REBUILD_BUCKETS = [0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

/** Reasons a request is refused before it runs (the gate's `Refusal.reason`). */
export const REFUSAL_REASONS = [
  'policy-group',
  'policy-wildcard',
  'initial-state',
  'missing-signature',
  'bad-signature',
  'stale-signature',
  'replayed-signature',
  'unverifiable-signature',
  'invalid-state',
  'unknown-group',
  'pattern',
] as const;

/** Tools for which per-tool series are exported at 0 before first use. */
export const ZERO_SERIES_TOOL_CAP = 500;

export class AgentMetrics {
  readonly registry = new Registry();
  private readonly registers = [this.registry];
  readonly processor: string;

  // TrustGraph parity
  readonly sessions: Counter<'processor' | 'outcome'> = new Counter({ name: 'tg_agent_session_total', help: 'Agent sessions by outcome', labelNames: ['processor', 'outcome'], registers: this.registers });
  readonly iterationCount: Histogram<'processor'> = new Histogram({ name: 'tg_agent_iteration_count', help: 'Iterations per completed session', labelNames: ['processor'], buckets: ITERATION_BUCKETS, registers: this.registers });
  readonly toolInvocations: Counter<'processor' | 'tool'> = new Counter({ name: 'tg_agent_tool_invocation_total', help: 'Tool invocations', labelNames: ['processor', 'tool'], registers: this.registers });
  readonly toolDuration: Histogram<'processor' | 'tool'> = new Histogram({ name: 'tg_agent_tool_duration_seconds', help: 'Tool execution time', labelNames: ['processor', 'tool'], buckets: LLM_BUCKETS, registers: this.registers });
  readonly toolErrors: Counter<'processor' | 'tool'> = new Counter({ name: 'tg_agent_tool_error_total', help: 'Tool executions that failed', labelNames: ['processor', 'tool'], registers: this.registers });
  readonly llmDuration: Histogram<'processor'> = new Histogram({ name: 'tg_agent_llm_duration_seconds', help: 'Time of the agent-react prompt call', labelNames: ['processor'], buckets: LLM_BUCKETS, registers: this.registers });
  readonly consumerDuration: Histogram<'processor' | 'consumer'> = new Histogram({ name: 'tg_consumer_request_duration_seconds', help: 'Time to process one consumed message', labelNames: ['processor', 'consumer'], buckets: CONSUMER_BUCKETS, registers: this.registers });
  readonly consumerProcessing: Counter<'processor' | 'consumer' | 'status'> = new Counter({ name: 'tg_consumer_processing_total', help: 'Consumed messages by status', labelNames: ['processor', 'consumer', 'status'], registers: this.registers });
  readonly producerMessages: Counter<'processor' | 'producer'> = new Counter({ name: 'tg_producer_messages_total', help: 'Messages published', labelNames: ['processor', 'producer'], registers: this.registers });
  readonly nextMessages: Counter<'processor' | 'event'> = new Counter({
    name: 'tg_agent_next_messages_total',
    help: 'next messages published and received through the broker (summed over replicas, published minus received is what the broker lost, plus those in transit), and kept on the replica that made them',
    labelNames: ['processor', 'event'],
    registers: this.registers,
  });
  readonly overloadRefusals: Counter<'processor'> = new Counter({ name: 'tg_agent_overload_refusals_total', help: 'Requests refused with an error because --max-queued requests, or --max-queued-bytes of them, were waiting for a slot', labelNames: ['processor'], registers: this.registers });
  readonly brokerDropRate: Gauge<'processor' | 'topic' | 'subscription'> = new Gauge({
    name: 'tg_agent_broker_drop_rate',
    help: "Messages per second the broker dropped for the flow's request subscription (its admin API's msgDropRate)",
    labelNames: ['processor', 'topic', 'subscription'],
    registers: this.registers,
  });
  readonly configVersion: Gauge<'processor'> = new Gauge({ name: 'tg_config_version', help: 'Configuration version in use', labelNames: ['processor'], registers: this.registers });
  /** Readiness, the concurrency slots and the replay memory, read at each scrape: the app wires in their sources. */
  readonly scraped = new ScrapeGauges(this.registers);
  /** 1 for the transport in use (`native` or `websocket`). */
  readonly transportInfo: Gauge<'processor' | 'transport'> = new Gauge({ name: 'tg_agent_transport_info', help: 'The broker transport in use (value 1)', labelNames: ['processor', 'transport'], registers: this.registers });
  readonly downstreamDuration: Histogram<'processor' | 'target_service'> = new Histogram({ name: 'tg_downstream_call_duration_seconds', help: 'Calls to TrustGraph services, by request spec', labelNames: ['processor', 'target_service'], buckets: LLM_BUCKETS, registers: this.registers });
  readonly downstreamTimeouts: Counter<'processor' | 'target_service'> = new Counter({ name: 'tg_downstream_timeout_total', help: 'Calls to TrustGraph services that timed out', labelNames: ['processor', 'target_service'], registers: this.registers });
  readonly downstreamErrors: Counter<'processor' | 'target_service' | 'error_type'> = new Counter({ name: 'tg_downstream_error_total', help: 'Calls to TrustGraph services that failed, by error type', labelNames: ['processor', 'target_service', 'error_type'], registers: this.registers });
  readonly hedgedRequests: Counter<'processor' | 'service' | 'outcome'> = new Counter({
    name: 'tg_agent_hedged_requests_total',
    help: 'Calls to a read-only service whose first reply was overdue, by how they ended: hedge_first (the request sent once more answered first), original_first (the first one did; the second was a wasted call), neither, over_budget (not sent again: --hedge-budget)',
    labelNames: ['processor', 'service', 'outcome'],
    registers: this.registers,
  });
  readonly hedgeDeadline: Gauge<'processor' | 'service'> = new Gauge({ name: 'tg_agent_hedge_deadline_seconds', help: "How long a call to a read-only service waits for its first reply before it is sent once more: the service's recent latency quantile times the factor, between floor and ceiling", labelNames: ['processor', 'service'], registers: this.registers });

  // Tool groups and states (TG-16) and enforcement
  readonly groupRequests: Counter<'processor' | 'group'> = new Counter({ name: 'tg_agent_tool_group_requests_total', help: 'Iterations by requested tool group (TG-16)', labelNames: ['processor', 'group'], registers: this.registers });
  readonly groupToolsAvailable: Gauge<'processor' | 'workspace' | 'group'> = new Gauge({ name: 'tg_agent_tool_group_availability', help: 'Tools in each group (TG-16)', labelNames: ['processor', 'workspace', 'group'], registers: this.registers });
  readonly stateToolsAvailable: Gauge<'processor' | 'workspace' | 'state'> = new Gauge({ name: 'tg_agent_state_availability', help: 'Tools offered in each state (TG-16)', labelNames: ['processor', 'workspace', 'state'], registers: this.registers });
  readonly offeredTools: Histogram<'processor'> = new Histogram({ name: 'tg_agent_filtered_tools_count', help: 'Number of tools offered to the model after filtering (TG-16)', labelNames: ['processor'], buckets: TOOL_COUNT_BUCKETS, registers: this.registers });
  readonly toolOffers: Counter<'processor' | 'tool'> = new Counter({ name: 'tg_agent_tool_offered_total', help: 'Iterations that offered the model this tool: a configured tool at 0 is never offered (its groups or states are never requested together)', labelNames: ['processor', 'tool'], registers: this.registers });
  readonly groupPairs: Counter<'processor' | 'group' | 'with'> = new Counter({ name: 'tg_agent_group_pair_requests_total', help: 'Conversations that requested both groups (each pair once, group < with; the first 8 groups of a request)', labelNames: ['processor', 'group', 'with'], registers: this.registers });
  readonly stateTransitions: Counter<'processor' | 'tool' | 'from' | 'to'> = new Counter({ name: 'tg_agent_state_transitions_total', help: 'State transitions by tool (TG-16)', labelNames: ['processor', 'tool', 'from', 'to'], registers: this.registers });
  readonly stateDuration: Histogram<'processor' | 'state'> = new Histogram({ name: 'tg_agent_workflow_duration_seconds', help: 'Time spent in each state: iteration time attributed to the state it ran in (TG-16)', labelNames: ['processor', 'state'], buckets: STATE_BUCKETS, registers: this.registers });
  readonly groupAccessDenied: Counter<'processor' | 'group'> = new Counter({ name: 'tg_agent_group_access_denied_total', help: 'Requests refused by the group policy, by group (TG-13, TG-16)', labelNames: ['processor', 'group'], registers: this.registers });
  readonly invalidStates: Counter<'processor' | 'state'> = new Counter({ name: 'tg_agent_invalid_state_transition_total', help: 'Requests in a state no tool of the workspace knows (TG-16)', labelNames: ['processor', 'state'], registers: this.registers });
  readonly groupsWithdrawn: Counter<'processor' | 'group' | 'reason'> = new Counter({ name: 'tg_agent_groups_withdrawn_total', help: 'Requested tool groups withdrawn from a request by the group policy (reason time-window: outside its availability windows; load: a service it depends on is over its limits)', labelNames: ['processor', 'group', 'reason'], registers: this.registers });
  readonly toolsWithdrawn: Counter<'processor' | 'tool' | 'reason'> = new Counter({ name: 'tg_agent_tools_withdrawn_total', help: 'Single tools withdrawn from a request by the group policy\'s availability rules (reason time-window or load, as for groups)', labelNames: ['processor', 'tool', 'reason'], registers: this.registers });
  readonly groupFallbacks: Counter<'processor' | 'group'> = new Counter({ name: 'tg_agent_group_fallbacks_total', help: 'Iterations that opted into fallback groups (+fallback), had no tool under their own groups and ran with this fallback group', labelNames: ['processor', 'group'], registers: this.registers });
  readonly unknownGroups: Counter<'processor' | 'action'> = new Counter({ name: 'tg_agent_unknown_group_requests_total', help: 'Requests naming a tool group no tool of the workspace is in, by what the policy\'s unknown-groups did (ignored, warned, rejected)', labelNames: ['processor', 'action'], registers: this.registers });
  readonly escalationAttempts: Counter<'processor' | 'reason'> = new Counter({ name: 'tg_agent_privilege_escalation_attempts_total', help: 'Suspected privilege escalation attempts (TG-16)', labelNames: ['processor', 'reason'], registers: this.registers });
  readonly toolDenied: Counter<'processor' | 'tool'> = new Counter({ name: 'tg_agent_tool_denied_total', help: 'Actions naming a tool that was not offered', labelNames: ['processor', 'tool'], registers: this.registers });
  readonly argumentFailures: Counter<'processor' | 'tool'> = new Counter({ name: 'tg_agent_argument_validation_failures_total', help: 'Tool calls refused for invalid arguments', labelNames: ['processor', 'tool'], registers: this.registers });
  /** Iterations that failed for more than the dialog's own logic (too large, too deep, broker, ...), by reason. */
  readonly iterationFailures: Counter<'processor' | 'reason'> = new Counter({ name: 'tg_agent_iteration_failures_total', help: 'Iterations that ended in an error response or a nack for more than the dialog logic, by reason', labelNames: ['processor', 'reason'], registers: this.registers });
  readonly registryRebuildDuration: Histogram<'processor'> = new Histogram({ name: 'tg_agent_registry_rebuild_seconds', help: 'Time to rebuild a workspace tool registry', labelNames: ['processor'], buckets: REBUILD_BUCKETS, registers: this.registers });
  readonly registryProblems: Gauge<'processor' | 'workspace'> = new Gauge({ name: 'tg_agent_registry_problems', help: 'Tool configuration entries with problems, per workspace', labelNames: ['processor', 'workspace'], registers: this.registers });
  readonly workflowFindings: Gauge<'processor' | 'workspace' | 'severity'> = new Gauge({
    name: 'tg_agent_workflow_findings',
    help: "Findings of the workflow linter (tg-agent lint) on a workspace's tools and group policy, by severity",
    labelNames: ['processor', 'workspace', 'severity'],
    registers: this.registers,
  });
  readonly registryTools: Gauge<'processor' | 'workspace'> = new Gauge({ name: 'tg_agent_registry_tools', help: 'Tools loaded, per workspace', labelNames: ['processor', 'workspace'], registers: this.registers });
  readonly ledgerRefusals: Counter<'processor' | 'reason'> = new Counter({
    name: 'tg_agent_ledger_records_refused_total',
    help: 'Seen-signature ledger records not taken, by reason (expired, not-yet-valid: outside the signing age limit; forged: not signed with the key; unreadable)',
    labelNames: ['processor', 'reason'],
    registers: this.registers,
  });
  readonly refusals: Counter<'processor' | 'reason'> = new Counter({ name: 'tg_agent_requests_refused_total', help: 'Requests refused before they ran, by reason (policy, initial state, signature, state)', labelNames: ['processor', 'reason'], registers: this.registers });
  readonly undeclaredArguments: Counter<'processor' | 'tool' | 'action'> = new Counter({ name: 'tg_agent_undeclared_arguments_total', help: 'Arguments the model gave that the tool does not declare, by what was done (dropped, passed, rejected)', labelNames: ['processor', 'tool', 'action'], registers: this.registers });
  readonly policyProblems: Gauge<'processor' | 'workspace'> = new Gauge({ name: 'tg_agent_policy_problems', help: 'Problems in the group policy config type, per workspace', labelNames: ['processor', 'workspace'], registers: this.registers });
  readonly configFailures: Counter<'processor' | 'part'> = new Counter({ name: 'tg_agent_config_apply_failures_total', help: 'Parts of config changes (tools, hooks, flows) that failed to apply', labelNames: ['processor', 'part'], registers: this.registers });

  // Orchestrator patterns
  readonly patternChosen: Counter<'processor' | 'pattern' | 'routed'> = new Counter({ name: 'tg_agent_pattern_total', help: 'Conversations by the pattern that runs them; routed="true" when the meta-router chose it', labelNames: ['processor', 'pattern', 'routed'], registers: this.registers });
  readonly planSteps: Histogram<'processor'> = new Histogram({ name: 'tg_agent_plan_steps', help: 'Steps per plan-then-execute plan (re-plans included)', labelNames: ['processor'], buckets: TOOL_COUNT_BUCKETS, registers: this.registers });
  readonly replans: Counter<'processor'> = new Counter({ name: 'tg_agent_replans_total', help: 'Plans made again after a refused or failed plan step', labelNames: ['processor'], registers: this.registers });
  readonly planStepsRefused: Counter<'processor' | 'tool' | 'at'> = new Counter({ name: 'tg_agent_plan_steps_refused_total', help: 'Plan steps refused before they ran: their tool is not offered for the groups and the state of that step (at: plan or step)', labelNames: ['processor', 'tool', 'at'], registers: this.registers });
  readonly subagents: Histogram<'processor'> = new Histogram({ name: 'tg_agent_subagents', help: 'Subagents a supervisor fanned out, per fan-out', labelNames: ['processor'], buckets: TOOL_COUNT_BUCKETS, registers: this.registers });
  readonly aggregations: Counter<'processor' | 'outcome'> = new Counter({ name: 'tg_agent_aggregations_total', help: "Supervisor fan-ins ended: every subagent's completion in (completed), the aggregation timeout passed (timed-out), a completion no fan-out waits for was turned away (unclaimed), the supervisor could not publish all its subagent requests (cancelled), or the synthesis request could not be sent even with its results cut (failed)", labelNames: ['processor', 'outcome'], registers: this.registers });

  // MCP argument discovery (design decision 9 (docs/design.md))
  readonly mcpDiscoveryFailures: Counter<'processor' | 'reason'> = new Counter({ name: 'tg_agent_mcp_discovery_failures_total', help: 'MCP tools/list discoveries that failed, per mcp entry and attempt, by reason', labelNames: ['processor', 'reason'], registers: this.registers });
  readonly librarianDocuments: Counter<'processor' | 'outcome'> = new Counter({ name: 'tg_agent_librarian_documents_total', help: 'Thought, observation and answer documents sent to the librarian, by outcome (saved, failed, skipped)', labelNames: ['processor', 'outcome'], registers: this.registers });
  readonly mcpDiscoveryFailing: Gauge<'processor' | 'workspace'> = new Gauge({ name: 'tg_agent_mcp_discovery_failing', help: 'mcp config entries whose last discovery failed, per workspace', labelNames: ['processor', 'workspace'], registers: this.registers });
  readonly mcpArgumentDrift: Gauge<'processor' | 'workspace' | 'tool'> = new Gauge({ name: 'tg_agent_mcp_argument_drift', help: "Differences between an mcp-tool's declared arguments and its server's input schema", labelNames: ['processor', 'workspace', 'tool'], registers: this.registers });
  readonly mcpToolArguments: Gauge<'processor' | 'workspace' | 'source'> = new Gauge({ name: 'tg_agent_mcp_tool_arguments', help: 'mcp-tool tools by where their arguments come from (declared, discovered, none)', labelNames: ['processor', 'workspace', 'source'], registers: this.registers });

  /** Configured label values per kind (`default` and `undefined` always). */
  private readonly known = new KnownLabelValues();
  /** Tool names exported at 0 (at most `ZERO_SERIES_TOOL_CAP`; a name leaves when no workspace has it). */
  private readonly zeroSeriesTools = new Set<string>();
  private readonly registries = new Map<string, ToolRegistry>();
  /** Resolves when the series of names no longer configured are removed (scrapes wait for it). */
  private pruning: Promise<void> = Promise.resolve();
  /** Tool label values of the drift series exported per workspace, to remove them when they go. */
  private readonly driftSeries = new Map<string, Set<string>>();

  constructor(processor: string, options: { defaultMetrics?: boolean } = {}) {
    this.processor = processor;
    // Every series of this registry, the default process metrics included, carries the processor label.
    this.registry.setDefaultLabels({ processor });
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });

    for (const action of ['ignored', 'warned', 'rejected']) this.unknownGroups.inc({ action }, 0);
    for (const reason of FAILURE_REASONS) this.iterationFailures.inc({ reason }, 0);
    for (const outcome of ['completed', 'timed-out', 'unclaimed', 'cancelled', 'failed']) this.aggregations.labels({ outcome });
    for (const outcome of ['completed', 'error', 'max-iterations']) this.sessions.inc({ outcome }, 0);
    for (const reason of ['missing-signature', 'bad-signature', 'stale-signature', 'replayed-signature', 'policy-wildcard', 'initial-state']) {
      this.escalationAttempts.inc({ reason }, 0);
    }
    for (const reason of REFUSAL_REASONS) this.refusals.inc({ reason }, 0);
    for (const reason of RECORD_REFUSALS) this.ledgerRefusals.inc({ reason }, 0);
    for (const part of ['tools', 'hooks', 'flows', 'patterns']) this.configFailures.inc({ part }, 0);
    // Counters an alert watches start at 0 (a series born at 1 shows no increase), `other` included.
    this.invalidStates.inc({ state: OTHER }, 0);
    this.groupAccessDenied.inc({ group: OTHER }, 0);
    this.toolDenied.inc({ tool: OTHER }, 0);
    // The group-tuning panels show a line at 0 until the first withdrawal or fallback.
    for (const reason of ['time-window', 'load']) {
      this.groupsWithdrawn.inc({ group: OTHER, reason }, 0);
      this.toolsWithdrawn.inc({ tool: OTHER, reason }, 0);
    }
    this.groupFallbacks.inc({ group: OTHER }, 0);
    this.configVersion.set(0);
  }

  /** A group, state or tool name as a label value: configured ones as-is, anything else `other`. */
  group(name: string): string {
    return name === '*' || this.known.has('groups', name) ? name : OTHER;
  }
  state(name: string): string {
    return this.known.has('states', name) ? name : OTHER;
  }
  tool(name: string): string {
    return this.known.has('tools', name) ? name : OTHER;
  }
  /** Pattern label values are bounded: the patterns this agent runs (the pattern table), anything else `other`. */
  pattern(name: string): string {
    return PATTERN_IDS.includes(name) ? name : OTHER;
  }

  /** After a rebuild: refresh the known label values and the availability gauges; export 0 for known series. */
  registryRebuilt(registry: ToolRegistry, seconds: number): void {
    const previous = this.registries.get(registry.workspace);
    this.registries.set(registry.workspace, registry);
    this.registryRebuildDuration.observe(seconds);
    const workspace = registry.workspace;
    this.registryProblems.set({ workspace }, registry.problems.filter((x) => x.severity === 'error').length);
    this.registryTools.set({ workspace }, registry.tools.length);
    // Same names, groups and states (a reload that changed descriptions or arguments): the label values, the
    // availability counts and the zero series stay as they are. Recomputing them is two sets of every tool name.
    if (previous !== undefined && registry.sameToolNamesAs(previous)) return;
    const added = this.refreshKnown(previous, registry);

    this.availabilityChanged(previous, registry);
    for (const group of added.groups) {
      this.groupRequests.inc({ group }, 0);
      this.groupAccessDenied.inc({ group }, 0);
    }
    // Zero series make dashboards gapless; past a few hundred tools they only make every scrape heavy.
    for (const tool of added.tools) {
      if (this.zeroSeriesTools.size >= ZERO_SERIES_TOOL_CAP) break;
      this.zeroSeriesTools.add(tool);
      this.toolInvocations.inc({ tool }, 0);
      this.toolOffers.inc({ tool }, 0);
      this.toolErrors.inc({ tool }, 0);
      this.toolDenied.inc({ tool }, 0);
      this.argumentFailures.inc({ tool }, 0);
    }
  }

  /**
   * The availability series of `next`'s workspace only: a workspace's counts depend on its own tools, so the
   * other workspaces' series stay (re-setting every workspace's made loading 1 000 workspaces quadratic).
   */
  private availabilityChanged(previous: ToolRegistry | undefined, next: ToolRegistry): void {
    const workspace = next.workspace;
    const counts = next.availability();
    const before = previous?.availability();
    for (const group of before?.groups.keys() ?? []) if (!counts.groups.has(group)) this.groupToolsAvailable.remove({ workspace, group });
    for (const state of before?.states.keys() ?? []) if (!counts.states.has(state)) this.stateToolsAvailable.remove({ workspace, state });
    for (const [group, count] of counts.groups) this.groupToolsAvailable.set({ workspace, group }, count);
    for (const [state, count] of counts.states) this.stateToolsAvailable.set({ workspace, state }, count);
  }

  /**
   * The known names after `next` replaced `previous` (or a workspace was deleted: `next` undefined). Removes every
   * series naming a group, state or tool no longer configured (a tool in 10 000 groups must not leave 20 000
   * series behind). Returns the names configured now that were not before.
   */
  private refreshKnown(previous: ToolRegistry | undefined, next: ToolRegistry | undefined): Record<LabelKind, string[]> {
    const { added, removed } = this.known.replace(previous, next);
    for (const tool of removed.tools) this.zeroSeriesTools.delete(tool);
    if (removed.groups.size + removed.states.size + removed.tools.size === 0) return added;
    const series: [Metric, string, LabelKind][] = [
      [this.groupRequests, 'group', 'groups'],
      [this.groupAccessDenied, 'group', 'groups'],
      [this.groupsWithdrawn, 'group', 'groups'],
      [this.groupFallbacks, 'group', 'groups'],
      [this.groupPairs, 'group', 'groups'],
      [this.groupPairs, 'with', 'groups'],
      [this.invalidStates, 'state', 'states'],
      [this.stateDuration, 'state', 'states'],
      [this.stateTransitions, 'from', 'states'],
      [this.stateTransitions, 'to', 'states'],
      [this.stateTransitions, 'tool', 'tools'],
      [this.toolInvocations, 'tool', 'tools'],
      [this.toolOffers, 'tool', 'tools'],
      [this.toolDuration, 'tool', 'tools'],
      [this.toolErrors, 'tool', 'tools'],
      [this.toolDenied, 'tool', 'tools'],
      [this.toolsWithdrawn, 'tool', 'tools'],
      [this.argumentFailures, 'tool', 'tools'],
      [this.undeclaredArguments, 'tool', 'tools'],
    ];
    this.pruning = this.pruning
      .then(async () => {
        for (const [metric, label, kind] of series) await removeSeries(metric, label, removed[kind]);
      })
      .catch(() => {});
    return added;
  }

  /** The workflow linter's counts for a workspace (all zero once it is deleted). */
  workflowChecked(workspace: string, counts: Readonly<Record<string, number>>): void {
    for (const [severity, count] of Object.entries(counts)) this.workflowFindings.set({ workspace, severity }, count);
  }

  workspaceDeleted(workspace: string): void {
    const previous = this.registries.get(workspace);
    this.registries.delete(workspace);
    this.refreshKnown(previous, undefined);
    const gone = new Set([workspace]);
    this.pruning = this.pruning
      .then(async () => {
        await removeSeries(this.groupToolsAvailable, 'workspace', gone);
        await removeSeries(this.stateToolsAvailable, 'workspace', gone);
      })
      .catch(() => {});
    const labels = { workspace };
    this.registryProblems.remove(labels);
    this.registryTools.remove(labels);
    this.mcpDiscoveryFailing.remove(labels);
    for (const tool of this.driftSeries.get(workspace) ?? []) this.mcpArgumentDrift.remove({ ...labels, tool });
    this.driftSeries.delete(workspace);
    for (const source of ['declared', 'discovered', 'none']) this.mcpToolArguments.remove({ ...labels, source });
  }

  /** MCP discovery is on: export its failure counter at 0 for every reason. */
  mcpDiscoveryEnabled(): void {
    for (const reason of DISCOVERY_FAILURE_REASONS) this.mcpDiscoveryFailures.inc({ reason }, 0);
  }

  mcpDiscoveryFailed(reason: DiscoveryFailureReason): void {
    this.mcpDiscoveryFailures.inc({ reason });
  }

  mcpDiscoveryStatus(workspace: string, failing: number): void {
    this.mcpDiscoveryFailing.set({ workspace }, failing);
  }

  /**
   * After a rebuild with discovery on (call after `registryRebuilt`, which learns the tool names): drift
   * findings per `mcp-tool` whose declared arguments could be compared (0 = none), and tools per argument
   * source. Series of tools that are gone, or no longer comparable, are removed.
   */
  mcpRegistryRebuilt(registry: ToolRegistry): void {
    const labels = { workspace: registry.workspace };
    const drift = new Map<string, number>();
    const sources = { declared: 0, discovered: 0, none: 0 };
    for (const [name, report] of registry.mcp) {
      sources[report.source]++;
      if (report.source === 'declared' && report.discovery === 'ok') {
        const tool = this.tool(name);
        drift.set(tool, (drift.get(tool) ?? 0) + report.drift.length);
      }
    }
    for (const tool of this.driftSeries.get(registry.workspace) ?? []) {
      if (!drift.has(tool)) this.mcpArgumentDrift.remove({ ...labels, tool });
    }
    for (const [tool, findings] of drift) this.mcpArgumentDrift.set({ ...labels, tool }, findings);
    this.driftSeries.set(registry.workspace, new Set(drift.keys()));
    for (const [source, count] of Object.entries(sources)) this.mcpToolArguments.set({ ...labels, source }, count);
  }

  async scrape(): Promise<{ contentType: string; body: string }> {
    await this.pruning;
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
