/**
 * `ToolServiceRequest` / `ToolServiceResponse` (defined next to the agent schemas; TrustGraph 2.11.1, unchanged since 2.8): requests to a
 * config-defined `tool-service` queue. The client reads until `end_of_stream`.
 */
import { z } from 'zod';
import { errorField } from './primitives.js';
import { bool, defineMessage, str } from './schema-kit.js';

export const ToolServiceRequestSchema = z.object({
  /** JSON-encoded config values (collection, …). */
  config: str(),
  /** JSON-encoded arguments from the LLM. */
  arguments: str(),
});
export type ToolServiceRequest = z.output<typeof ToolServiceRequestSchema>;
export type ToolServiceRequestInput = z.input<typeof ToolServiceRequestSchema>;

export const ToolServiceResponseSchema = z.object({
  error: errorField(),
  /** The observation text. */
  response: str(),
  end_of_stream: bool(),
});
export type ToolServiceResponse = z.output<typeof ToolServiceResponseSchema>;
export type ToolServiceResponseInput = z.input<typeof ToolServiceResponseSchema>;

const toolServiceRequest = defineMessage('ToolServiceRequest', ToolServiceRequestSchema);
const toolServiceResponse = defineMessage('ToolServiceResponse', ToolServiceResponseSchema);

export const toolServiceRequestCodec = toolServiceRequest.codec;
export const toolServiceResponseCodec = toolServiceResponse.codec;
export const makeToolServiceRequest = toolServiceRequest.make;
export const makeToolServiceResponse = toolServiceResponse.make;
