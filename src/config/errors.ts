/** Errors of the config layer (stable codes in docs/errors.md). */
import { CodedError } from '../errors/index.js';

/** TrustGraph's config service answered a request with an error. */
export class ConfigServiceError extends CodedError {
  override readonly name = 'ConfigServiceError';
  readonly code = 'TG_CONFIG_SERVICE';
}

/** A config dump (`tg-show-config`'s output, read by `tg-agent lint --file`) that cannot be read; the message names the type or entry. */
export class ConfigDumpError extends CodedError {
  override readonly name = 'ConfigDumpError';
  readonly code = 'TG_CONFIG_DUMP_INVALID';
}

/** An audit log `tg-agent lint --against` cannot read (missing, unreadable, a broken `.gz`); the message names the file. */
export class AuditLogError extends CodedError {
  override readonly name = 'AuditLogError';
  readonly code = 'TG_AUDIT_LOG_UNREADABLE';
}
