/** Errors of the tools layer (stable codes in docs/errors.md). */
import { CodedError } from '../errors/index.js';

/** A tool could not run; its message becomes the observation `Error: <message>`. */
export class ToolRunError extends CodedError {
  override readonly name = 'ToolRunError';
  readonly code = 'TG_TOOL_RUN_FAILED';
}
