/**
 * The bookkeeping of one consumed request: which of its messages are still in flight, whether its final
 * message (`end_of_dialog`) reached the broker, and the first failure on the way. The flow runtime reads it
 * after the iteration to make sure the client gets exactly one final message.
 */
import { NotConnectedError, TransportError } from '../bus/index.js';
import type { IterationResult } from '../agent/index.js';
import type { RequestTelemetry } from './ports.js';

export interface DialogState {
  /** The end-of-dialog message has been handed to the producer. */
  ended: boolean;
  /** The broker acknowledged the end-of-dialog message. */
  delivered: boolean;
  /**
   * Refused without a reply on purpose: a continuation whose signature is missing, wrong or already used was not
   * written by this conversation's agent, and its `id` may name someone else's dialog (see `Refusal.unanswered`).
   */
  unanswered?: boolean;
  /** Why the end-of-dialog message failed, when it did. */
  finalFailure?: unknown;
  /** The first failure of anything in this request's handling. */
  failure?: unknown;
  /**
   * Responses handed to the producer but not yet acknowledged by the broker. They are not awaited one by one
   * — a producer writes frames in order, so a conversation's messages keep theirs — but all are awaited
   * before the `next` message is published and before the request is acked.
   */
  pending: Promise<void>[];
  /** Explainability triples in flight (a persistent topic, slower to acknowledge): awaited only before the ack. */
  background: Promise<void>[];
  /** The request's telemetry (metrics, audit), once known. */
  events?: RequestTelemetry;
  /** What the iteration returned, when it ran. */
  result?: IterationResult;
}

export function newDialog(): DialogState {
  return { ended: false, delivered: false, pending: [], background: [] };
}

/** Start a publish without waiting for its acknowledgement; `settle` awaits them all (and throws the first failure). */
export function track(list: Promise<void>[], publish: Promise<void>): Promise<void> {
  list.push(publish);
  publish.catch(() => {}); // observed in settle(); never an unhandled rejection
  return Promise.resolve();
}

export async function settle(list: Promise<void>[]): Promise<void> {
  while (list.length > 0) await Promise.all(list.splice(0));
}

/** Await everything in flight; failures are kept in `dialog.failure` instead of thrown. */
export async function settleAll(dialog: DialogState): Promise<void> {
  for (const list of [dialog.pending, dialog.background]) {
    while (list.length > 0) {
      const results = await Promise.allSettled(list.splice(0));
      for (const r of results) if (r.status === 'rejected') dialog.failure ??= r.reason;
    }
  }
}

/**
 * Whether the final message may have reached the broker although its publish failed: after retries on a
 * lost connection the frame may have been written. Then a second final message could duplicate it.
 */
export function finalMayHaveBeenSent(dialog: DialogState): boolean {
  const failure = dialog.finalFailure;
  // NotConnectedError: the producer never got the message, so an error response cannot duplicate it.
  return failure instanceof TransportError && failure.retriable && !(failure instanceof NotConnectedError);
}
