/**
 * `trustgraph-base/trustgraph/schema/agent.py` (TrustGraph 2.11.1, unchanged since 2.8): PlanStep, AgentStep, AgentRequest,
 * AgentResponse. Field order is the dataclass order.
 */
import { z } from 'zod';
import { TripleSchema, errorField } from './primitives.js';
import { pythonStr } from './python-repr.js';
import { bool, defineMessage, jsonTypeName, list, num, optNum, optStr, str, strKeepingNull, strMap } from './schema-kit.js';

export const PlanStepSchema = z.object({
  goal: str(),
  tool_hint: str(),
  depends_on: list(z.number()),
  status: str('pending'),
  result: str(),
});
export type PlanStep = z.output<typeof PlanStepSchema>;
export type PlanStepInput = z.input<typeof PlanStepSchema>;

/**
 * `dict[str, str]` of tool arguments. A Python agent always writes strings (`str()` of the parsed value), but
 * clients put raw history on the bus through the gateway; any JSON value is accepted and rendered as Python's `str()`
 * would (`10` → `"10"`, `true` → `"True"`, `null` → `"None"`, `[1,"a"]` → `"[1, 'a']"`).
 */
export const argumentsField = () =>
  z
    // Not z.record: it rebuilds the object by assignment, which drops a key such as "__proto__".
    .custom<Record<string, unknown>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), {
      error: (issue) => `expected object, got ${jsonTypeName(issue.input)}`,
    })
    .nullish()
    // fromEntries defines own properties: a key such as "__proto__" survives (an assignment would drop it, and
    // the iteration signature, which covers every key, would then fail on the next iteration).
    .transform((v): Record<string, string> => (v ? Object.fromEntries(Object.entries(v).map(([key, value]) => [key, pythonStr(value)])) : {}));

export const AgentStepSchema = z.object({
  thought: str(),
  action: str(),
  arguments: argumentsField(),
  observation: str(),
  step_type: str(),
  plan: list(PlanStepSchema),
  subagent_results: strMap(),
});
export type AgentStep = z.output<typeof AgentStepSchema>;
export type AgentStepInput = z.input<typeof AgentStepSchema>;

/** Groups one request may name at most: no request needs more, and each name costs work in every check. */
export const MAX_REQUEST_GROUPS = 1000;

/**
 * `list[str] | None`, as TrustGraph's schema says. A bare string is refused (`field "group": expected array, got
 * string`): TrustGraph's gateway passes it through and its agent then matches each of its characters as a group (and
 * `"*"` anywhere in it as every group), so it never meant one group there either.
 */
export const groupField = () =>
  z
    .array(z.string())
    .max(MAX_REQUEST_GROUPS, { error: (issue) => `at most ${MAX_REQUEST_GROUPS} groups, got ${(issue.input as unknown[]).length}` })
    .nullish()
    .transform((v): string[] | null => v ?? null);

export const AgentRequestSchema = z.object({
  question: str(),
  state: strKeepingNull(),
  group: groupField(),
  history: list(AgentStepSchema),
  collection: str('default'),
  streaming: bool(),
  session_id: str(),
  conversation_id: str(),
  pattern: str(),
  task_type: str(),
  framing: str(),
  correlation_id: str(),
  parent_session_id: str(),
  subagent_goal: str(),
  expected_siblings: num(),
});
export type AgentRequest = z.output<typeof AgentRequestSchema>;
export type AgentRequestInput = z.input<typeof AgentRequestSchema>;

/** Values of `AgentResponse.message_type`. (`action` is reserved; ReAct never emits it.) */
export type AgentMessageType = 'thought' | 'action' | 'observation' | 'answer' | 'explain' | 'error' | '';

export const AgentResponseSchema = z.object({
  message_type: str(),
  content: str(),
  end_of_message: bool(),
  end_of_dialog: bool(),
  explain_id: optStr(),
  explain_graph: optStr(),
  explain_triples: list(TripleSchema),
  message_id: str(),
  error: errorField(),
  in_token: optNum(),
  out_token: optNum(),
  model: optStr(),
});
export type AgentResponse = z.output<typeof AgentResponseSchema>;
export type AgentResponseInput = z.input<typeof AgentResponseSchema>;

const planStep = defineMessage('PlanStep', PlanStepSchema);
const agentStep = defineMessage('AgentStep', AgentStepSchema);
const agentRequest = defineMessage('AgentRequest', AgentRequestSchema);
const agentResponse = defineMessage('AgentResponse', AgentResponseSchema);

export const planStepCodec = planStep.codec;
export const agentStepCodec = agentStep.codec;
export const agentRequestCodec = agentRequest.codec;
export const agentResponseCodec = agentResponse.codec;

/**
 * An AgentResponse from fields already in their output form (strings, booleans, triples built by `iriTerm` /
 * `literalTerm`), the rest at their defaults, without running zod: the agent writes several per iteration.
 */
export const agentResponseOf = agentResponse.of;
/** An AgentRequest from fields in their output form (e.g. a decoded request's), without running zod. */
export const agentRequestOf = agentRequest.of;
/** An AgentStep from fields in their output form (`arguments` already a string map), without running zod. */
export const agentStepOf = agentStep.of;

export const makePlanStep = planStep.make;
export const makeAgentStep = agentStep.make;
export const makeAgentRequest = agentRequest.make;
export const makeAgentResponse = agentResponse.make;
