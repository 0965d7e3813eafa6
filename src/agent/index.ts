/**
 * The agent: one consumed AgentRequest run by the pattern it names (`runAgentRequest`, the pattern table), what
 * an iteration reports and publishes, the supervisor's fan-in, and the failures and message sizes every
 * iteration shares.
 */
export { addDocumentRequest, type AgentDocument, conversationDocuments, type DocumentSink } from './agent-documents.js';
export { DialogError } from './errors.js';
export { describeFailure, type Failure, FAILURE_REASONS } from './failure.js';
export type {
  FanInKind,
  IterationEvents,
  IterationOutput,
  IterationResult,
  PlanStepRefusal,
  SessionOutcome,
  UndeclaredAction,
  UndeclaredArguments,
} from './iteration.js';
export {
  budgetFor,
  checkFits,
  fitResponse,
  fitTriples,
  type MessageBudget,
  nextRequestBudget,
  requestLimitBytes,
} from './message-budget.js';
export { isSubagent, subagentCompletion } from './orchestration-fields.js';
export { PATTERN_CONFIG_TYPES, type PatternCatalog } from './orchestrator/catalog.js';
export {
  type DecodedFanIn,
  FAN_IN_PROPERTY,
  fanInKindOf,
  fanInMessage,
  readFanInMessage,
} from './orchestrator/fan-in-messages.js';
export { FanIn, type FanInStep, REJECTED } from './orchestrator/fan-in.js';
export { WorkspacePatterns } from './orchestrator/workspace-patterns.js';
export { runAgentRequest } from './patterns/dispatch.js';
export { PATTERN_IDS } from './patterns/pattern-table.js';
export { emitFanIn } from './patterns/supervisor.js';
export { errorResponse } from './responses.js';
