/** Errors of the HTTP endpoints (stable codes in docs/errors.md). */
import { CodedError } from '../errors/index.js';

/** A request whose URL cannot be read: the client's fault, answered 400 and logged at debug only. */
export class BadRequestError extends CodedError {
  readonly code = 'TG_HTTP_BAD_REQUEST';
  override readonly name = 'BadRequestError';
}
