/**
 * Shared by every folder, importing none: the `CodedError` base of every error raised on purpose (codes in
 * docs/errors.md), `InvalidUseError`, and the helpers that put errors and values into bounded text.
 */
export { CodedError } from './coded-error.js';
export { describeValue, formatPath, quote, showValue } from './describe-value.js';
export { clipText, errorMessage } from './error-text.js';
export { InvalidUseError } from './invalid-use-error.js';
export { maskSecrets, urlSecrets } from './secret-text.js';
