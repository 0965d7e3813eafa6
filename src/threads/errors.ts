/** Errors of the worker threads (stable codes in docs/errors.md). */
import { CodedError } from '../errors/index.js';

/** A worker thread failed (threw, exited, could not start) or was closed; its callers fall back to doing the work themselves. */
export class WorkerFailedError extends CodedError {
  override readonly name = 'WorkerFailedError';
  readonly code = 'TG_WORKER_FAILED';
}
