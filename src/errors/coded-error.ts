/**
 * The base of every error the service raises on purpose. Each layer keeps its errors in its own module
 * (`bus/errors.ts`, `wire/errors.ts`, `config/errors.ts`, `agent/errors.ts`, …); each class has a stable
 * `code` (listed in docs/errors.md) that users can search for and code can match on, with `instanceof` or
 * the code, never with the message text. The error that led to this one travels as `cause`.
 */
export abstract class CodedError extends Error {
  /** A stable identifier for this kind of failure, e.g. `TG_TRANSPORT_CLOSED`. */
  abstract readonly code: string;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
  }
}
