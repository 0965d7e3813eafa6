/**
 * What a request must pass before it runs: the workspace's group policy (TG-13, docs/requirements.md) with its initial states, the
 * iteration signature, and — under `--strict-states` — a state some tool of the workspace knows.
 * Every refusal is counted by reason; a state no tool knows is counted even when it is let through.
 */
import type { Properties } from '../bus/transport.js';
import type { FlowDefinition } from '../config/flows.js';
import type { WorkspaceChange } from '../config/config-watcher.js';
import type { Refusal, RequestGate } from '../flow/flow-runtime.js';
import type { AgentMetrics } from '../observability/metrics.js';
import type { ToolRegistry } from '../tools/registry/registry.js';
import { normalizeRequestState } from '../tools/registry/selection.js';
import type { AgentRequest } from '../wire/index.js';
import { checkGroups, checkInitialState, parsePolicy, type GroupPolicy } from './group-policy.js';
import type { IterationSigner, Verdict } from './iteration-signature.js';

export interface SecurityGateOptions {
  policyConfigType: string;
  signer?: IterationSigner;
  strictStates: boolean;
  metrics?: AgentMetrics;
  /** The policy config type of a workspace was read: its problems (empty when it is fine). */
  onProblems?(workspace: string, problems: readonly string[]): void;
}

const SIGNATURE_MESSAGES: Readonly<Record<Exclude<Verdict, 'ok'>, string>> = {
  missing: 'Iteration refused: it continues a conversation but carries no signature (was it written outside the agent?)',
  bad: 'Iteration refused: its signature does not match its request, workspace, flow and id (was it modified or moved?)',
  stale: 'Iteration refused: its signature is older than the accepted age (--signing-max-age); start the conversation again',
  replayed: 'Iteration refused: this signed iteration was already processed (a replay)',
};

export class SecurityGate implements RequestGate {
  private readonly policies = new Map<string, GroupPolicy | undefined>();
  private readonly problems = new Map<string, readonly string[]>();

  constructor(private readonly options: SecurityGateOptions) {}

  /** Keep each workspace's policy current (called on every config change). */
  onConfig(change: WorkspaceChange): void {
    if (!change.changedTypes.includes(this.options.policyConfigType)) return;
    const parsed = parsePolicy(change.workspace, change.snapshot[this.options.policyConfigType] ?? {});
    const { policy } = parsed;
    const problems = [...parsed.problems];
    if (policy?.initialStates && !this.options.signer) {
      problems.push(
        `workspace "${change.workspace}": the group policy's initial-states are checked on first requests only; without ` +
          '--signing-key a client can send a made-up history and skip them',
      );
    }
    this.policies.set(change.workspace, policy);
    this.problems.set(change.workspace, problems);
    this.options.onProblems?.(change.workspace, problems);
  }

  onWorkspaceDeleted(workspace: string): void {
    this.policies.delete(workspace);
    this.problems.delete(workspace);
  }

  policyOf(workspace: string): GroupPolicy | undefined {
    return this.policies.get(workspace);
  }

  problemsOf(workspace: string): readonly string[] {
    return this.problems.get(workspace) ?? [];
  }

  check(flow: FlowDefinition, request: AgentRequest, properties: Properties, registry: ToolRegistry): Refusal | undefined {
    const metrics = this.options.metrics;
    const p = { processor: metrics?.processor ?? '' };
    const refuse = (refusal: Refusal, escalation?: string): Refusal => {
      metrics?.refusals.inc({ ...p, reason: refusal.reason });
      if (escalation) metrics?.escalationAttempts.inc({ ...p, reason: escalation });
      return refusal;
    };

    const policy = this.policies.get(flow.workspace);
    const decision = checkGroups(policy, request.group);
    if (!decision.allowed) {
      for (const group of decision.deniedGroups) metrics?.groupAccessDenied.inc({ ...p, group: metrics.group(group) });
      return refuse(
        { kind: 'group-policy', reason: decision.wildcard ? 'policy-wildcard' : 'policy-group', message: decision.message },
        decision.wildcard ? 'policy-wildcard' : undefined,
      );
    }

    const initial = checkInitialState(policy, request);
    if (!initial.allowed) return refuse({ kind: 'initial-state', reason: 'initial-state', message: initial.message }, 'initial-state');

    const { signer } = this.options;
    if (signer) {
      const route = { workspace: flow.workspace, flow: flow.flow, id: properties.id ?? 'unknown' };
      const verdict = signer.verify(route, request, properties);
      if (verdict !== 'ok') {
        const reason = `${verdict}-signature`;
        return refuse({ kind: 'signature', reason, message: SIGNATURE_MESSAGES[verdict] }, reason);
      }
    }

    const state = normalizeRequestState(request.state);
    if (!registry.knownStates.has(state)) {
      metrics?.invalidStates.inc({ ...p, state: metrics.state(state) });
      if (this.options.strictStates) {
        return refuse({
          kind: 'invalid-state',
          reason: 'invalid-state',
          message: `Invalid state "${state}": no tool of workspace "${flow.workspace}" uses it`,
        });
      }
    }
    return undefined;
  }

  nextProperties(flow: FlowDefinition, request: AgentRequest, id: string): Properties {
    return this.options.signer ? this.options.signer.sign({ workspace: flow.workspace, flow: flow.flow, id }, request) : {};
  }
}
