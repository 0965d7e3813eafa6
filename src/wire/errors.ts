/** Errors of the wire layer (stable codes in docs/errors.md). */
import { CodedError } from '../errors/index.js';

/** A payload that is not valid JSON or does not fit the schema. Never crosses the wire as-is. */
export class WireDecodeError extends CodedError {
  override readonly name = 'WireDecodeError';
  readonly code = 'TG_WIRE_UNDECODABLE';

  constructor(
    readonly schema: string,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`Cannot decode ${schema}: ${detail}`, options);
  }
}
