/**
 * `trustgraph-base/trustgraph/schema/llm.py` (TrustGraph 2.11.1, unchanged since 2.8): PromptRequest / PromptResponse (the agent uses the
 * `prompt-rag` instance). Every term value is a JSON-encoded string (Python `json.dumps`, see `pythonJsonDumps`).
 */
import { z } from 'zod';
import { errorField } from './primitives.js';
import { bool, defineMessage, optNum, optStr, str, strMap } from './schema-kit.js';

export const PromptRequestSchema = z.object({
  /** Template id, e.g. `agent-react`, `question`. */
  id: str(),
  /** name → JSON-encoded value. */
  terms: strMap(),
  streaming: bool(),
});
export type PromptRequest = z.output<typeof PromptRequestSchema>;
export type PromptRequestInput = z.input<typeof PromptRequestSchema>;

export const PromptResponseSchema = z.object({
  error: errorField(),
  /** Plain-text result (`null` on the wire reads as `""`). */
  text: str(),
  /** JSON-encoded structured result (`null` reads as `""`). */
  object: str(),
  end_of_stream: bool(),
  in_token: optNum(),
  out_token: optNum(),
  model: optStr(),
});
export type PromptResponse = z.output<typeof PromptResponseSchema>;
export type PromptResponseInput = z.input<typeof PromptResponseSchema>;

const promptRequest = defineMessage('PromptRequest', PromptRequestSchema);
const promptResponse = defineMessage('PromptResponse', PromptResponseSchema);

export const promptRequestCodec = promptRequest.codec;
export const promptResponseCodec = promptResponse.codec;
export const makePromptRequest = promptRequest.make;
/** A PromptRequest from fields in their output form (terms already JSON-encoded), without running zod. */
export const promptRequestOf = promptRequest.of;
export const makePromptResponse = promptResponse.make;
