/**
 * TrustGraph wire messages: codecs (JSON bytes ⇄ typed messages), message types and `make*` helpers that
 * fill TrustGraph's defaults. Transports and clients use only what is exported here.
 */
export type { Codec } from './codec.js';
export { WireDecodeError } from './errors.js';
export { MAX_NESTING_DEPTH, type JsonObject } from './schema-kit.js';
export {
  dumpJsonOnce,
  pythonFloatRepr,
  pythonJsonDumps,
  pythonJsonString,
  pythonNumberRepr,
  pythonRepr,
  pythonStr,
  pythonStringRepr,
} from './python-repr.js';

export {
  TERM_BLANK,
  TERM_IRI,
  TERM_LITERAL,
  TERM_TRIPLE,
  errorRecordCodec,
  iriTerm,
  literalTerm,
  makeErrorRecord,
  makeTerm,
  makeTriple,
  termCodec,
  tripleCodec,
  type ErrorRecord,
  type ErrorRecordInput,
  type Term,
  type TermInput,
  type Triple,
  type TripleInput,
} from './primitives.js';

export {
  agentRequestCodec,
  agentResponseCodec,
  agentRequestOf,
  agentResponseOf,
  agentStepOf,
  agentStepCodec,
  makeAgentRequest,
  makeAgentResponse,
  makeAgentStep,
  makePlanStep,
  planStepCodec,
  type AgentMessageType,
  type AgentRequest,
  type AgentRequestInput,
  type AgentResponse,
  type AgentResponseInput,
  type AgentStep,
  type AgentStepInput,
  type PlanStep,
  type PlanStepInput,
} from './agent.js';

export {
  configPushCodec,
  configRequestCodec,
  configResponseCodec,
  makeConfigPush,
  makeConfigRequest,
  makeConfigResponse,
  type ConfigKey,
  type ConfigOperation,
  type ConfigPush,
  type ConfigPushInput,
  type ConfigRequest,
  type ConfigRequestInput,
  type ConfigResponse,
  type ConfigResponseInput,
  type ConfigValue,
  type ConfigValueInput,
  type WorkspaceChanges,
} from './config.js';

export {
  makePromptRequest,
  promptRequestOf,
  makePromptResponse,
  promptRequestCodec,
  promptResponseCodec,
  type PromptRequest,
  type PromptRequestInput,
  type PromptResponse,
  type PromptResponseInput,
} from './prompt.js';

export {
  embeddingsRequestCodec,
  embeddingsResponseCodec,
  makeEmbeddingsRequest,
  makeEmbeddingsResponse,
  makeTextCompletionRequest,
  makeTextCompletionResponse,
  makeToolRequest,
  toolRequestOf,
  makeToolResponse,
  textCompletionRequestCodec,
  textCompletionResponseCodec,
  toolRequestCodec,
  toolResponseCodec,
  type EmbeddingsRequest,
  type EmbeddingsRequestInput,
  type EmbeddingsResponse,
  type EmbeddingsResponseInput,
  type ModelInfo,
  type TextCompletionRequest,
  type TextCompletionRequestInput,
  type TextCompletionResponse,
  type TextCompletionResponseInput,
  type ToolRequest,
  type ToolRequestInput,
  type ToolResponse,
  type ToolResponseInput,
} from './llm.js';

export {
  graphRagQueryCodec,
  graphRagResponseCodec,
  makeGraphRagQuery,
  makeGraphRagResponse,
  type GraphRagQuery,
  type GraphRagQueryInput,
  type GraphRagResponse,
  type GraphRagResponseInput,
  type Source,
  type TraversalStep,
  type UserContext,
  type UserContextInput,
} from './retrieval.js';

export {
  makeStructuredQueryRequest,
  makeStructuredQueryResponse,
  structuredQueryRequestCodec,
  structuredQueryResponseCodec,
  type StructuredQueryRequest,
  type StructuredQueryRequestInput,
  type StructuredQueryResponse,
  type StructuredQueryResponseInput,
} from './structured-query.js';

export {
  makeRowEmbeddingsRequest,
  makeRowEmbeddingsResponse,
  rowEmbeddingsRequestCodec,
  rowEmbeddingsResponseCodec,
  type RowEmbeddingsRequest,
  type RowEmbeddingsRequestInput,
  type RowEmbeddingsResponse,
  type RowEmbeddingsResponseInput,
  type RowIndexMatch,
  type RowIndexMatchInput,
} from './query.js';

export {
  makeToolServiceRequest,
  makeToolServiceResponse,
  toolServiceRequestCodec,
  toolServiceResponseCodec,
  type ToolServiceRequest,
  type ToolServiceRequestInput,
  type ToolServiceResponse,
  type ToolServiceResponseInput,
} from './tool-service.js';

export {
  makeMetadata,
  makeTriples,
  triplesCodec,
  triplesOf,
  type Metadata,
  type MetadataInput,
  type Triples,
  type TriplesInput,
} from './knowledge.js';

export {
  librarianRequestCodec,
  librarianResponseCodec,
  documentMetadataOf,
  makeDocumentMetadata,
  librarianRequestOf,
  makeLibrarianRequest,
  makeLibrarianResponse,
  type Criteria,
  type DocumentMetadata,
  type DocumentMetadataInput,
  type LibrarianRequest,
  type LibrarianRequestInput,
  type LibrarianResponse,
  type LibrarianResponseInput,
  type ProcessingMetadata,
} from './library.js';
export { checkJsonLimits } from './json-limits.js';
export { FLOW_SERVICES, type FlowService, isFlowService } from './services.js';
