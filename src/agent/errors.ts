/**
 * Errors of the agent layer: what ends a dialog with an error response. Codes are stable (docs/errors.md);
 * match them by class, never by message text.
 */
import { CodedError } from '../errors/index.js';

/** Raised inside an iteration to end the dialog with an error response. */
export class DialogError extends CodedError {
  override readonly name: string = 'DialogError';
  readonly code: string = 'TG_AGENT_DIALOG';
}

/** The conversation reached `--max-iterations` without an answer (TrustGraph's text, kept as is). */
export class MaxIterationsError extends DialogError {
  override readonly name = 'MaxIterationsError';
  override readonly code = 'TG_AGENT_MAX_ITERATIONS';

  constructor() {
    super('Too many agent iterations');
  }
}

/** The prompt service failed: this ends the dialog with an error, as in TrustGraph. */
export class PromptServiceError extends CodedError {
  override readonly name = 'PromptServiceError';
  readonly code = 'TG_AGENT_PROMPT_SERVICE';
}

/** A message that cannot be made to fit the transport. Not retriable: the same message will not fit later. */
export class MessageTooLargeError extends CodedError {
  override readonly name = 'MessageTooLargeError';
  readonly code = 'TG_MESSAGE_TOO_LARGE';

  constructor(
    /** What the message is, e.g. `the answer`. */
    readonly what: string,
    readonly bytes: number,
    readonly limitBytes: number,
    remedy: string,
  ) {
    super(`${what} is ${bytes} bytes encoded, over the ${limitBytes} bytes one message can carry here; ${remedy}`);
  }
}

/** A message on the supervisor's aggregation topic that is not one of ours (fan-out, completion, cancel); it is dropped. */
export class FanInMessageError extends CodedError {
  override readonly name = 'FanInMessageError';
  readonly code = 'TG_FAN_IN_MESSAGE_INVALID';
}
