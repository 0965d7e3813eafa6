/**
 * The audit trail (TG-14, TG-17, docs/requirements.md): one JSON line per iteration through pino, optionally also published to a
 * Pulsar topic. It records who asked for which groups, what was offered and filtered out, what was denied,
 * and every state transition with its time.
 */
import type { Logger } from 'pino';
import type { Producer } from '../bus/transport.js';

export interface AuditTransition {
  tool: string;
  from: string;
  to: string;
  at: string;
}

export interface AuditDenial {
  kind: 'tool-not-offered' | 'invalid-arguments' | 'group-policy' | 'unknown-group' | 'initial-state' | 'pattern' | 'signature' | 'invalid-state' | 'plan-step-refused';
  /** For refusals: why, e.g. `policy-group`, `initial-state`, `stale-signature`, `replayed-signature`. */
  reason?: string;
  detail: string;
  tool?: string;
  at: string;
}

export interface AuditRecord {
  audit: 'agent-iteration';
  request_id: string;
  workspace: string;
  flow: string;
  /** Cut to 256 characters (a client may send any length). */
  session_id: string;
  /** 0 when the request could not be decoded. */
  iteration: number;
  /** As the request sent it (null = default group): the first 50, each cut to 100 characters. */
  requested_groups: string[] | null;
  /** How many the request named, when more than are listed. */
  requested_groups_count?: number;
  /** After defaults: what filtering used (the first 50). */
  effective_groups: string[];
  /** Requested groups no tool of the workspace is in (first 20, each cut to 100 characters); absent when there were none. */
  unknown_groups?: readonly string[];
  /** Requested groups the policy's availability rules withdrew for this iteration, with why. */
  withdrawn_groups?: readonly { readonly group: string; readonly reason: string }[];
  /** Single tools the policy's availability rules withdrew for this iteration, with why. */
  withdrawn_tools?: readonly { readonly tool: string; readonly reason: string }[];
  /** The request opted into fallback groups and ran with these, its own groups giving it no tool. */
  fallback_groups?: readonly string[];
  initial_state: string;
  final_state: string;
  transitions: AuditTransition[];
  offered_tools: string[];
  /** The first MAX_LISTED_TOOLS names; `filtered_by_*_count` has the total. */
  filtered_by_group: string[];
  filtered_by_state: string[];
  filtered_by_group_count: number;
  filtered_by_state_count: number;
  action: string | null;
  tools_used: { tool: string; groups: string[]; ok: boolean }[];
  denials: AuditDenial[];
  /** Arguments the model gave that the tool does not declare, and what was done with them (first 50). */
  undeclared_arguments: { tool: string; argument: string; action: 'dropped' | 'passed' | 'rejected' }[];
  undeclared_arguments_count: number;
  /** `unanswered`: not even an error response could be published; the request was negatively acknowledged. */
  outcome: 'answer' | 'next' | 'error' | 'refused' | 'unanswered';
  /** Why the iteration failed, when it failed for more than the dialog's own logic (see FailureReason). */
  failure: string | null;
  error: string | null;
  started_at: string;
  execution_ms: number;
  /** Orchestrated conversations only: the pattern and task type, and what the plan-then-execute iteration did. */
  pattern?: string;
  task_type?: string;
  routed?: boolean;
  plan?: { steps: number; replan: number };
  /** Supervisor: the subagents this iteration fanned out. */
  subagents?: number;
}

export class AuditTrail {
  /**
   * @param producer the audit topic's producer, or its creation still under way (the agent may start before
   *   the broker): records wait for it in order.
   */
  constructor(
    private readonly logger: Logger,
    private readonly producer?: Producer | Promise<Producer>,
  ) {}

  record(record: AuditRecord): void {
    this.logger.info(record, 'audit');
    if (this.producer) {
      Promise.resolve(this.producer)
        .then((producer) => producer.send({ payload: Buffer.from(JSON.stringify(record)), properties: { id: record.request_id } }))
        .catch((error: unknown) => this.logger.warn({ err: error }, 'Could not publish an audit record'));
    }
  }
}
