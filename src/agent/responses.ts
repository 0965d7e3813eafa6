/**
 * The AgentResponse messages of one iteration, exactly as TrustGraph's ReAct agent writes them
 * (docs/trustgraph-agent-notes.md §3.10–3.11): `message_type` values, `message_id` URIs, end flags, and error responses.
 * They are built from typed fields without running zod (`agentResponseOf`): an iteration writes several.
 */
import { agentResponseOf, type AgentResponse, type Triple } from '../wire/index.js';
import { RETRIEVAL_GRAPH } from './explainability.js';

export function thoughtResponse(content: string, messageId: string, endOfMessage: boolean): AgentResponse {
  return agentResponseOf({ message_type: 'thought', content, end_of_message: endOfMessage, message_id: messageId });
}

export function observationResponse(content: string, messageId: string): AgentResponse {
  return agentResponseOf({ message_type: 'observation', content, end_of_message: true, message_id: messageId });
}

/** An answer chunk (streaming) or the whole answer; the dialog's last message has `endOfDialog`. */
export function answerResponse(content: string, messageId: string, end: { message: boolean; dialog: boolean }): AgentResponse {
  return agentResponseOf({
    message_type: 'answer',
    content,
    end_of_message: end.message,
    end_of_dialog: end.dialog,
    message_id: messageId,
  });
}

/** Inline provenance: the entity's URI and its triples (the array is carried as it is, not copied). */
export function explainResponse(explainId: string, triples: Triple[]): AgentResponse {
  return agentResponseOf({
    message_type: 'explain',
    explain_id: explainId,
    explain_graph: RETRIEVAL_GRAPH,
    explain_triples: triples,
  });
}

/**
 * The dialog ends in error: `message_type: "error"` with `error.type: "agent-error"` and both end flags.
 * A request that could not even be decoded gets an empty `message_type`, as TrustGraph's base class sends.
 */
export function errorResponse(message: string, messageType: 'error' | '' = 'error'): AgentResponse {
  return agentResponseOf({
    message_type: messageType,
    content: messageType === 'error' ? message : '',
    end_of_message: true,
    end_of_dialog: true,
    error: { type: 'agent-error', message },
  });
}
