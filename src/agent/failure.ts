/**
 * What went wrong with an iteration, said plainly and in a bounded length: the reason (a metric label) and
 * the text that goes into the log and into the error response. The text never embeds request fields beyond
 * what the error message itself holds, and is cut to MAX_ERROR_TEXT characters, so the error response that
 * carries it always fits in one message.
 */
import { FrameTooLargeError, TransportError } from '../bus/index.js';
import { WireDecodeError } from '../wire/index.js';
import { clipText, errorMessage } from '../errors/index.js';
import { MessageTooLargeError } from './errors.js';

export type FailureReason = 'too-large' | 'too-deep' | 'undecodable' | 'broker-unreachable' | 'transport' | 'internal';

export const FAILURE_REASONS: readonly FailureReason[] = [
  'too-large',
  'too-deep',
  'undecodable',
  'broker-unreachable',
  'transport',
  'internal',
];

export interface Failure {
  readonly reason: FailureReason;
  readonly text: string;
}

/** Longest error text put into an error response or a log message. */
export const MAX_ERROR_TEXT = 2000;

export function describeFailure(error: unknown): Failure {
  const message = errorMessage(error);
  if (error instanceof MessageTooLargeError || error instanceof FrameTooLargeError) return failure('too-large', message);
  if (error instanceof RangeError) {
    return failure('too-deep', `a value in this conversation is too large or nested too deeply to process (${error.name}: ${message})`);
  }
  if (error instanceof WireDecodeError) return failure('undecodable', message);
  if (error instanceof TransportError) return failure(error.retriable ? 'broker-unreachable' : 'transport', message);
  return failure('internal', message);
}

/** `text` cut to MAX_ERROR_TEXT characters, saying how long it was. */
export function clipErrorText(text: string): string {
  return clipText(text, MAX_ERROR_TEXT, { sayLength: true });
}

function failure(reason: FailureReason, text: string): Failure {
  return { reason, text: clipErrorText(text) };
}
