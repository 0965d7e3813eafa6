/**
 * Shared by every folder, importing none: the `CodedError` base of every error raised on purpose (codes in
 * docs/errors.md), `InvalidUseError`, and the helpers that put errors and values into bounded text.
 */
export { CodedError } from './coded-error.js';
export { describeValue, formatPath, listText, MAX_LISTED, quote, quoteList, showValue } from './describe-value.js';
export { clipText, errorMessage, firstNames, listNames, MAX_LISTED_NAME_LENGTH } from './error-text.js';
export { InvalidUseError } from './invalid-use-error.js';
export { normaliseKey, suggestKey } from './key-suggestion.js';
export {
  type BasicAuth,
  basicAuthorization,
  decodeURIComponentSafe,
  maskSecrets,
  redactUrl,
  urlSecrets,
  withoutCredentials,
} from './secret-text.js';
