/** Errors of the config layer (stable codes in docs/errors.md). */
import { CodedError } from '../errors/index.js';

/** TrustGraph's config service answered a request with an error. */
export class ConfigServiceError extends CodedError {
  override readonly name = 'ConfigServiceError';
  readonly code = 'TG_CONFIG_SERVICE';
}
