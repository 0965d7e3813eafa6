/** The fields of trustgraph-base 2.11.1's AgentResponse dataclass: every one is on the wire, `null` when unset. */
export const AGENT_RESPONSE_FIELDS = [
  'content',
  'end_of_dialog',
  'end_of_message',
  'error',
  'explain_graph',
  'explain_id',
  'explain_triples',
  'in_token',
  'message_id',
  'message_type',
  'model',
  'out_token',
] as const;
