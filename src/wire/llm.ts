/**
 * `trustgraph-base/trustgraph/schema/llm.py` and `embeddings.py` (TrustGraph 2.11.1): text completion,
 * embeddings and MCP tool messages. 2.11 added `TextCompletionRequest.operation` (`completion` or `list-models`)
 * and `TextCompletionResponse.models`; 2.8 messages without them decode to the defaults.
 */
import { z } from 'zod';
import { errorField } from './primitives.js';
import { bool, defineMessage, list, optJsonObject, optNum, optStr, str } from './schema-kit.js';

export const TextCompletionRequestSchema = z.object({
  /** `completion` (the default) or `list-models`. */
  operation: str('completion'),
  system: str(),
  prompt: str(),
  streaming: bool(),
  response_format: optStr(),
  /** JSON schema object for structured output, or null. */
  schema: optJsonObject(),
});
export type TextCompletionRequest = z.output<typeof TextCompletionRequestSchema>;
export type TextCompletionRequestInput = z.input<typeof TextCompletionRequestSchema>;

/** One model in a `list-models` answer (2.11). */
export const ModelInfoSchema = z.object({
  id: str(),
  name: optStr(),
  owned_by: optStr(),
  created: optNum(),
  description: optStr(),
  context_length: optNum(),
  max_output_length: optNum(),
  input_modalities: list(z.string()),
  output_modalities: list(z.string()),
  supported_features: list(z.string()),
  input_price: optNum(),
  output_price: optNum(),
  family: optStr(),
  parameter_size: optStr(),
  quantization: optStr(),
  format: optStr(),
});
export type ModelInfo = z.output<typeof ModelInfoSchema>;

export const TextCompletionResponseSchema = z.object({
  error: errorField(),
  response: str(),
  in_token: optNum(),
  out_token: optNum(),
  model: optStr(),
  end_of_stream: bool(),
  /** Answer to `list-models`. */
  models: list(ModelInfoSchema),
});
export type TextCompletionResponse = z.output<typeof TextCompletionResponseSchema>;
export type TextCompletionResponseInput = z.input<typeof TextCompletionResponseSchema>;

export const EmbeddingsRequestSchema = z.object({
  texts: list(z.string()),
});
export type EmbeddingsRequest = z.output<typeof EmbeddingsRequestSchema>;
export type EmbeddingsRequestInput = z.input<typeof EmbeddingsRequestSchema>;

export const EmbeddingsResponseSchema = z.object({
  error: errorField(),
  /** One vector per input text. */
  vectors: list(z.array(z.number())),
});
export type EmbeddingsResponse = z.output<typeof EmbeddingsResponseSchema>;
export type EmbeddingsResponseInput = z.input<typeof EmbeddingsResponseSchema>;

/** MCP tool invocation (`mcp-tool-request`). */
export const ToolRequestSchema = z.object({
  /** The configured MCP tool id. */
  name: str(),
  /** JSON-encoded argument object. */
  parameters: str(),
});
export type ToolRequest = z.output<typeof ToolRequestSchema>;
export type ToolRequestInput = z.input<typeof ToolRequestSchema>;

export const ToolResponseSchema = z.object({
  error: errorField(),
  /** Unstructured result (`null` reads as `""`). */
  text: str(),
  /** JSON-encoded structured result (`null` reads as `""`). */
  object: str(),
});
export type ToolResponse = z.output<typeof ToolResponseSchema>;
export type ToolResponseInput = z.input<typeof ToolResponseSchema>;

const textCompletionRequest = defineMessage('TextCompletionRequest', TextCompletionRequestSchema);
const textCompletionResponse = defineMessage('TextCompletionResponse', TextCompletionResponseSchema);
const embeddingsRequest = defineMessage('EmbeddingsRequest', EmbeddingsRequestSchema);
const embeddingsResponse = defineMessage('EmbeddingsResponse', EmbeddingsResponseSchema);
const toolRequest = defineMessage('ToolRequest', ToolRequestSchema);
const toolResponse = defineMessage('ToolResponse', ToolResponseSchema);

export const textCompletionRequestCodec = textCompletionRequest.codec;
export const textCompletionResponseCodec = textCompletionResponse.codec;
export const embeddingsRequestCodec = embeddingsRequest.codec;
export const embeddingsResponseCodec = embeddingsResponse.codec;
export const toolRequestCodec = toolRequest.codec;
export const toolResponseCodec = toolResponse.codec;

export const makeTextCompletionRequest = textCompletionRequest.make;
export const makeTextCompletionResponse = textCompletionResponse.make;
export const makeEmbeddingsRequest = embeddingsRequest.make;
export const makeEmbeddingsResponse = embeddingsResponse.make;
export const makeToolRequest = toolRequest.make;
/** A ToolRequest from fields in their output form, without running zod. */
export const toolRequestOf = toolRequest.of;
export const makeToolResponse = toolResponse.make;
