/**
 * What a request must pass before it runs: the workspace's group policy (TG-13), the iteration signature
 * (DESIGN decision 10), and — under `--strict-states` — a state some tool of the workspace knows.
 * Every refusal is counted; a state no tool knows is counted even when it is let through.
 */
import type { Properties } from '../bus/transport.js';
import type { FlowDefinition } from '../config/flows.js';
import type { WorkspaceChange } from '../config/config-watcher.js';
import type { Refusal, RequestGate } from '../flow/flow-runtime.js';
import type { AgentMetrics } from '../observability/metrics.js';
import type { ToolRegistry } from '../tools/registry.js';
import { normalizeRequestState } from '../tools/selection.js';
import type { AgentRequest } from '../wire/index.js';
import { checkGroups, parsePolicy, type GroupPolicy } from './group-policy.js';
import { SIGNATURE_PROPERTY, type IterationSigner } from './iteration-signature.js';

export interface SecurityGateOptions {
  policyConfigType: string;
  signer?: IterationSigner;
  strictStates: boolean;
  metrics?: AgentMetrics;
  onProblem?(message: string): void;
}

export class SecurityGate implements RequestGate {
  private readonly policies = new Map<string, GroupPolicy | undefined>();

  constructor(private readonly options: SecurityGateOptions) {}

  /** Keep each workspace's policy current (called on every config change). */
  onConfig(change: WorkspaceChange): void {
    if (!change.changedTypes.includes(this.options.policyConfigType)) return;
    const { policy, problem } = parsePolicy(change.workspace, change.snapshot[this.options.policyConfigType] ?? {});
    this.policies.set(change.workspace, policy);
    if (problem) this.options.onProblem?.(problem);
  }

  policyOf(workspace: string): GroupPolicy | undefined {
    return this.policies.get(workspace);
  }

  check(flow: FlowDefinition, request: AgentRequest, properties: Properties, registry: ToolRegistry): Refusal | undefined {
    const metrics = this.options.metrics;
    const p = { processor: metrics?.processor ?? '' };

    const decision = checkGroups(this.policies.get(flow.workspace), request.group);
    if (!decision.allowed) {
      for (const group of decision.deniedGroups) metrics?.groupAccessDenied.inc({ ...p, group: metrics.group(group) });
      if (decision.wildcard) metrics?.escalationAttempts.inc({ ...p, reason: 'policy-wildcard' });
      return { kind: 'group-policy', message: decision.message };
    }

    const { signer } = this.options;
    if (signer) {
      const id = properties.id ?? 'unknown';
      const verdict = signer.verify(id, request, properties[SIGNATURE_PROPERTY]);
      if (verdict !== 'ok') {
        metrics?.escalationAttempts.inc({ ...p, reason: `${verdict}-signature` });
        return {
          kind: 'signature',
          message:
            verdict === 'missing'
              ? 'Iteration refused: it continues a conversation but carries no signature (was it written outside the agent?)'
              : 'Iteration refused: its signature does not match its id, group, state and history (was it modified?)',
        };
      }
    }

    const state = normalizeRequestState(request.state);
    if (!registry.knownStates.has(state)) {
      metrics?.invalidStates.inc({ ...p, state: metrics.state(state) });
      if (this.options.strictStates) {
        return { kind: 'invalid-state', message: `Invalid state "${state}": no tool of workspace "${flow.workspace}" uses it` };
      }
    }
    return undefined;
  }

  nextProperties(request: AgentRequest, id: string): Properties {
    return this.options.signer ? { [SIGNATURE_PROPERTY]: this.options.signer.sign(id, request) } : {};
  }
}
