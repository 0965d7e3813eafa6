/** Errors of the running flows (stable codes in docs/errors.md). */
import { CodedError } from '../errors/index.js';

/** `--service-timeouts` holds a part that is not `<service>=<seconds>[/<gap seconds>]` of a known service. */
export class ServiceTimeoutsError extends CodedError {
  override readonly name = 'ServiceTimeoutsError';
  readonly code = 'TG_SERVICE_TIMEOUTS_INVALID';
}

/** The librarian answered a document save with an error; the document is not saved, the dialog goes on. */
export class LibrarianError extends CodedError {
  override readonly name = 'LibrarianError';
  readonly code = 'TG_LIBRARIAN_REFUSED';
}
