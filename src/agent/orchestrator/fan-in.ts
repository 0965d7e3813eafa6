/**
 * The fan-in of a supervisor's subagents, kept where the broker can give it back: every message of one
 * correlation (the supervisor's fan-out record and each subagent's completion) arrives on the aggregation
 * topic with the correlation id as its key, so one consumer of the Key_Shared subscription sees them all. It
 * holds them unacknowledged until every expected sibling is in; if it dies, the broker hands the same
 * messages to the key's next owner, which rebuilds the same state from them. Nothing here is lost with a
 * process: this class is only the owner's view of the messages it holds.
 *
 * A sibling is one distinct `subagent_goal` (TrustGraph's aggregator keys its results by goal): a second
 * completion of the same goal (a redelivery, a retried subagent) is a duplicate and is acknowledged at once.
 * The fan-out record is normally first (the supervisor publishes it before the subagent requests), but a
 * completion that comes before it waits for it as well.
 *
 * Every conversation that sent a completion ends with exactly one final message. A genuine fan-out's subagents
 * carry their supervisor's client `id`, so the fan-in ends that one conversation (the synthesis, or one
 * timeout error). A completion under any other `id` — a client that claims to be a subagent of a fan-out made
 * by another conversation, or of one that already ended — cannot join it: it is rejected at once, and its own
 * conversation ends with an error saying why.
 *
 * A fan-out whose subagent requests could not all be published is cancelled: its client already has the
 * error, so the fan-in must say nothing more. The cancel (with the record) is held like the rest until the
 * record's time is up, so a new owner of the key learns of it too; completions that arrive meanwhile, or after,
 * are dropped (acknowledged, `late`), and the end says nothing to the client.
 */
import { createHash } from 'node:crypto';
import type { AgentRequest } from '../../wire/index.js';
import { SUBAGENT_COMPLETION } from '../orchestration-fields.js';

/** What the supervisor keeps of its conversation for the synthesis: TrustGraph's request template. */
export interface FanOutRecord {
  readonly correlationId: string;
  /** The `id` property of the client's request: findings, the synthesis request and any error go there. */
  readonly id: string;
  /** When the fan-out was made (ms since the epoch): the correlation times out from here. */
  readonly createdAt: number;
  /** The supervisor's request (question, groups, history, streaming, conversation, task type, framing). */
  readonly template: AgentRequest;
  readonly expectedSiblings: number;
}

export interface Completion {
  readonly correlationId: string;
  readonly id: string;
  /** The subagent's completion request (its `subagent-completion` step carries the answer). */
  readonly request: AgentRequest;
}

/** The supervisor's word that its fan-out failed halfway (its client already has the error). */
export interface Cancel {
  readonly correlationId: string;
  /** The supervisor's client `id`. */
  readonly id: string;
}

/** One sibling's result, in the order the completions arrived (the findings' indexes). */
export interface SiblingResult {
  readonly goal: string;
  readonly answer: string;
  /** The subagent's session: its finding derives from that session's conclusion. */
  readonly sessionId: string;
}

export type FanInStep<H> =
  /** Held: acknowledge nothing yet. */
  | { readonly kind: 'waiting' }
  /** Nothing to hold (a duplicate of a conversation that ended or is held): acknowledge this message now. */
  | {
      readonly kind: 'ignored';
      readonly handle: H;
      readonly reason: string;
      /** A completion of a cancelled fan-out: its conversation already ended with the supervisor's error. */
      readonly late?: boolean;
    }
  /** The fan-out was cancelled: acknowledge `handles` (completions held so far); the record and cancel stay held. */
  | { readonly kind: 'cancelled'; readonly id: string; readonly handles: readonly H[] }
  /**
   * Completions no supervisor of theirs is waiting for: end the conversation `id` with an error naming
   * `reason`, then acknowledge `handles`. Whatever else is held stays held.
   */
  | { readonly kind: 'rejected'; readonly id: string; readonly reason: string; readonly handles: readonly H[] }
  /** Every sibling is in: synthesise, then acknowledge every held message. */
  | { readonly kind: 'complete'; readonly record: FanOutRecord; readonly results: readonly SiblingResult[]; readonly handles: readonly H[] };

export interface Expired<H> {
  readonly correlationId: string;
  /** Where the final error goes ('' when neither a record nor a completion named it). */
  readonly id: string;
  readonly record?: FanOutRecord;
  readonly received: number;
  readonly handles: readonly H[];
  /** Cancelled by its supervisor: its client already has its one final message, so nothing is sent. */
  readonly cancelled: boolean;
}

interface Held<T, H> {
  readonly value: T;
  handle: H;
}

interface Pending<H> {
  record?: Held<FanOutRecord, H>;
  cancel?: Held<Cancel, H>;
  readonly completions: Map<string, Held<Completion, H>>;
  /** When the first message of this correlation arrived here (for completions without a record). */
  readonly firstSeen: number;
}

/** Why a completion cannot join its correlation's fan-in (the final error names it). */
export const REJECTED = {
  ended: 'its fan-in already ended',
  otherConversation: 'its fan-out was made by another conversation',
  otherCompletions: "another conversation's completions for it are already waiting",
  cancelled: 'its supervisor could not publish all its subagent requests, and already ended its conversation with an error',
} as const;

/** Correlations finished on this replica, remembered so that a late duplicate is acknowledged, not held. */
const FINISHED_REMEMBERED = 10_000;

export class FanIn<H> {
  private readonly pending = new Map<string, Pending<H>>();
  /** Finished correlations (by `finishedKey`) → the conversations (`id`s) they ended, and whether it was cancelled. */
  private readonly finished = new Map<string, { ids: Set<string>; cancelled: boolean }>();

  /**
   * `same` tells whether two handles are one message (a redelivery after a reconnect): the newer handle
   * replaces the held one instead of being acknowledged, so the broker keeps the message until the end.
   */
  constructor(
    private readonly same: (a: H, b: H) => boolean = () => false,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.pending.size;
  }

  addRecord(record: FanOutRecord, handle: H): FanInStep<H> {
    if (this.finished.has(finishedKey(record.correlationId))) return { kind: 'ignored', handle, reason: 'the correlation already ended' };
    const entry = this.entry(record.correlationId);
    if (entry.record) {
      if (!this.same(entry.record.handle, handle)) return { kind: 'ignored', handle, reason: 'a second fan-out record' };
      entry.record.handle = handle;
      return { kind: 'waiting' };
    }
    entry.record = { value: record, handle };
    if (entry.cancel) return { kind: 'waiting' };
    // Completions held before the record (a redelivery out of order) that another conversation sent.
    const foreign = [...entry.completions].filter(([, held]) => held.value.id !== record.id);
    if (foreign.length > 0) {
      for (const [goal] of foreign) entry.completions.delete(goal);
      return { kind: 'rejected', id: foreign[0]![1].value.id, reason: REJECTED.otherConversation, handles: foreign.map(([, held]) => held.handle) };
    }
    return this.settle(record.correlationId, entry);
  }

  addCompletion(completion: Completion, handle: H): FanInStep<H> {
    const { correlationId, id } = completion;
    const ended = this.finished.get(finishedKey(correlationId));
    if (ended) {
      if (id === '' || ended.ids.has(id)) {
        return ended.cancelled
          ? { kind: 'ignored', handle, reason: REJECTED.cancelled, late: true }
          : { kind: 'ignored', handle, reason: 'the correlation already ended' };
      }
      ended.ids.add(id);
      return { kind: 'rejected', id, reason: REJECTED.ended, handles: [handle] };
    }
    const entry = this.entry(correlationId);
    if (entry.cancel && entry.cancel.value.id === id) return { kind: 'ignored', handle, reason: REJECTED.cancelled, late: true };
    const owner = entry.record?.value.id ?? [...entry.completions.values()][0]?.value.id;
    if (owner !== undefined && owner !== id) {
      const reason = entry.record ? REJECTED.otherConversation : REJECTED.otherCompletions;
      return { kind: 'rejected', id, reason, handles: [handle] };
    }
    const goal = completion.request.subagent_goal;
    const held = entry.completions.get(goal);
    if (held) {
      if (!this.same(held.handle, handle)) return { kind: 'ignored', handle, reason: `a second completion of the goal ${JSON.stringify(goal)}` };
      held.handle = handle;
      return { kind: 'waiting' };
    }
    entry.completions.set(goal, { value: completion, handle });
    return this.settle(correlationId, entry);
  }

  /**
   * The supervisor cancelled its fan-out. Its own completions held so far are returned to acknowledge; the
   * cancel is held with the record until the record's time is up (`expire`, which then says nothing).
   */
  addCancel(cancel: Cancel, handle: H): FanInStep<H> {
    if (this.finished.has(finishedKey(cancel.correlationId))) return { kind: 'ignored', handle, reason: 'the correlation already ended' };
    const entry = this.entry(cancel.correlationId);
    if (entry.record && entry.record.value.id !== cancel.id) return { kind: 'ignored', handle, reason: 'a cancel from another conversation' };
    if (entry.cancel) {
      if (!this.same(entry.cancel.handle, handle)) return { kind: 'ignored', handle, reason: 'a second cancel' };
      entry.cancel.handle = handle;
      return { kind: 'waiting' };
    }
    entry.cancel = { value: cancel, handle };
    const own = [...entry.completions].filter(([, held]) => held.value.id === cancel.id);
    for (const [goal] of own) entry.completions.delete(goal);
    return { kind: 'cancelled', id: cancel.id, handles: own.map(([, held]) => held.handle) };
  }

  /**
   * Correlations past their time, removed: `timeoutMs` after the fan-out (its record's time, whoever holds it
   * now), or, for completions whose record never came, `orphanMs` after the first of them arrived here. The
   * record is with the broker before its subagents start and one key's messages arrive in order, so a
   * completion without a record means no supervisor is waiting (it ended, timed out, or never existed); the
   * grace only covers a redelivery that brings them out of order.
   */
  expire(timeoutMs: number, orphanMs: number = timeoutMs): Expired<H>[] {
    const now = this.now();
    const expired: Expired<H>[] = [];
    for (const [correlationId, entry] of this.pending) {
      const record = entry.record?.value;
      const age = now - (record?.createdAt ?? entry.firstSeen);
      if (age <= (record ? timeoutMs : orphanMs)) continue;
      const first = [...entry.completions.values()][0]?.value;
      const id = record?.id ?? entry.cancel?.value.id ?? first?.id ?? '';
      const cancelled = entry.cancel !== undefined;
      this.finish(correlationId, id, cancelled);
      expired.push({
        correlationId,
        id,
        ...(record ? { record } : {}),
        received: entry.completions.size,
        handles: handlesOf(entry),
        cancelled,
      });
    }
    return expired;
  }

  /**
   * Forget what is held (the consumer closed or lost its connection: the broker redelivers those messages)
   * and return their handles. Finished correlations stay remembered.
   */
  reset(): H[] {
    const handles = [...this.pending.values()].flatMap(handlesOf);
    this.pending.clear();
    return handles;
  }

  /** A finished correlation whose end could not be published: its redelivered messages rebuild it. */
  reopen(correlationId: string): void {
    this.finished.delete(finishedKey(correlationId));
  }

  private entry(correlationId: string): Pending<H> {
    let entry = this.pending.get(correlationId);
    if (!entry) {
      entry = { completions: new Map(), firstSeen: this.now() };
      this.pending.set(correlationId, entry);
    }
    return entry;
  }

  private settle(correlationId: string, entry: Pending<H>): FanInStep<H> {
    const record = entry.record?.value;
    if (!record || entry.cancel || entry.completions.size < record.expectedSiblings) return { kind: 'waiting' };
    this.finish(correlationId, record.id);
    const results = [...entry.completions.values()].map(({ value }) => ({
      goal: value.request.subagent_goal,
      answer: completionAnswer(value.request),
      sessionId: value.request.session_id,
    }));
    return { kind: 'complete', record, results, handles: handlesOf(entry) };
  }

  private finish(correlationId: string, id: string, cancelled = false): void {
    this.pending.delete(correlationId);
    this.finished.set(finishedKey(correlationId), { ids: new Set([id]), cancelled });
    if (this.finished.size > FINISHED_REMEMBERED) {
      const oldest = this.finished.keys().next().value;
      if (oldest !== undefined) this.finished.delete(oldest);
    }
  }
}

/** A long correlation id (anyone can send one) is remembered by its digest, so the memory stays bounded. */
function finishedKey(correlationId: string): string {
  return correlationId.length <= 128 ? correlationId : `sha256-${createHash('sha256').update(correlationId, 'utf8').digest('hex')}`;
}

function handlesOf<H>(entry: Pending<H>): H[] {
  return [
    ...(entry.record ? [entry.record.handle] : []),
    ...(entry.cancel ? [entry.cancel.handle] : []),
    ...[...entry.completions.values()].map((c) => c.handle),
  ];
}

/** The answer a completion carries: its `subagent-completion` step's observation (TrustGraph reads the first). */
export function completionAnswer(request: AgentRequest): string {
  return request.history.find((h) => h.step_type === SUBAGENT_COMPLETION)?.observation ?? '';
}
