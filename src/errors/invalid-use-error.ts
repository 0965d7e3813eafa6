import { CodedError } from './coded-error.js';

/**
 * A function was used against its contract (a bug in the caller, never a fault of the input or of another
 * service): the message says which call and what to do instead.
 */
export class InvalidUseError extends CodedError {
  override readonly name = 'InvalidUseError';
  readonly code = 'TG_INVALID_USE';
}
