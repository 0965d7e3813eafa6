/**
 * The orchestration fields of an AgentRequest (`conversation_id`, `pattern`, `task_type`, `framing`,
 * `correlation_id`, `parent_session_id`, `subagent_goal`, `expected_siblings`): every `next` request carries
 * them on unchanged, as TrustGraph's orchestrator does, so any replica can take the next iteration.
 */
import { agentRequestOf, makeAgentStep, type AgentRequest, type AgentRequestInput, type AgentStep } from '../wire/index.js';
import type { UsageTracker } from './usage.js';

export type OrchestrationFields = Pick<
  AgentRequest,
  | 'conversation_id'
  | 'pattern'
  | 'task_type'
  | 'framing'
  | 'correlation_id'
  | 'parent_session_id'
  | 'subagent_goal'
  | 'expected_siblings'
>;

export function orchestrationFields(request: AgentRequest): OrchestrationFields {
  return {
    conversation_id: request.conversation_id,
    pattern: request.pattern,
    task_type: request.task_type,
    framing: request.framing,
    correlation_id: request.correlation_id,
    parent_session_id: request.parent_session_id,
    subagent_goal: request.subagent_goal,
    expected_siblings: request.expected_siblings,
  };
}

/** The `next` request of a conversation: the same question and fields, the new state (null: as received) and history. */
export function nextAgentRequest(request: AgentRequest, sessionId: string, state: string | null, history: AgentStep[]): AgentRequest {
  return agentRequestOf({
    question: request.question,
    state,
    group: request.group,
    history,
    collection: request.collection,
    streaming: request.streaming,
    session_id: sessionId,
    ...orchestrationFields(request),
  });
}

/** What a pattern adds to one ReAct iteration when the orchestrator runs it. */
export interface OrchestrationContext {
  readonly usage: UsageTracker;
  /** The first iteration derives from the meta-router's decision instead of the session. */
  readonly patternDecisionUri?: string;
  /** The explain entity the session derives from (a subagent's: its parent's decomposition). */
  readonly sessionParentUri?: string;
  /** Orchestrated conversations' conclusions say why they ended, as TrustGraph's orchestrator writes. */
  readonly terminationReasons: boolean;
}

/** The step type of the message a finished subagent sends back for aggregation. */
export const SUBAGENT_COMPLETION = 'subagent-completion';

/** A request is a subagent's when it carries a `correlation_id` (set by its supervisor). */
export function isSubagent(request: AgentRequest): boolean {
  return request.correlation_id !== '';
}

/**
 * A subagent's answer goes back on the request topic instead of to the client: TrustGraph's completion
 * message (one `subagent-completion` step whose observation is the answer).
 */
export function subagentCompletion(request: AgentRequest, answer: string, extra: Partial<AgentRequestInput> = {}): AgentRequestInput {
  return {
    question: request.question,
    state: '',
    group: request.group,
    history: [
      makeAgentStep({ thought: 'Subagent completed', action: 'complete', arguments: {}, observation: answer, step_type: SUBAGENT_COMPLETION }),
    ],
    collection: request.collection,
    streaming: false,
    session_id: request.session_id,
    conversation_id: request.conversation_id,
    pattern: '',
    correlation_id: request.correlation_id,
    parent_session_id: request.parent_session_id,
    subagent_goal: request.subagent_goal,
    expected_siblings: request.expected_siblings,
    ...extra,
  };
}
