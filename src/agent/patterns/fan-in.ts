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
 */
import type { AgentRequest } from '../../wire/index.js';
import { SUBAGENT_COMPLETION } from './orchestration.js';

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
  /** Nothing to hold (a duplicate, or a correlation already finished): acknowledge this message now. */
  | { readonly kind: 'ignored'; readonly handle: H; readonly reason: string }
  /** Every sibling is in: synthesise, then acknowledge every held message. */
  | { readonly kind: 'complete'; readonly record: FanOutRecord; readonly results: readonly SiblingResult[]; readonly handles: readonly H[] };

export interface Expired<H> {
  readonly correlationId: string;
  /** Where the final error goes ('' when neither a record nor a completion named it). */
  readonly id: string;
  readonly record?: FanOutRecord;
  readonly received: number;
  readonly handles: readonly H[];
}

interface Held<T, H> {
  readonly value: T;
  handle: H;
}

interface Pending<H> {
  record?: Held<FanOutRecord, H>;
  readonly completions: Map<string, Held<Completion, H>>;
  /** When the first message of this correlation arrived here (for completions without a record). */
  readonly firstSeen: number;
}

/** Correlations finished on this replica, remembered so that a late duplicate is acknowledged, not held. */
const FINISHED_REMEMBERED = 10_000;

export class FanIn<H> {
  private readonly pending = new Map<string, Pending<H>>();
  private readonly finished = new Set<string>();

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
    if (this.finished.has(record.correlationId)) return { kind: 'ignored', handle, reason: 'the correlation already ended' };
    const entry = this.entry(record.correlationId);
    if (entry.record) {
      if (!this.same(entry.record.handle, handle)) return { kind: 'ignored', handle, reason: 'a second fan-out record' };
      entry.record.handle = handle;
      return { kind: 'waiting' };
    }
    entry.record = { value: record, handle };
    return this.settle(record.correlationId, entry);
  }

  addCompletion(completion: Completion, handle: H): FanInStep<H> {
    const { correlationId } = completion;
    if (this.finished.has(correlationId)) return { kind: 'ignored', handle, reason: 'the correlation already ended' };
    const entry = this.entry(correlationId);
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
      this.finish(correlationId);
      const first = [...entry.completions.values()][0]?.value;
      expired.push({
        correlationId,
        id: record?.id ?? first?.id ?? '',
        ...(record ? { record } : {}),
        received: entry.completions.size,
        handles: handlesOf(entry),
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
    this.finished.delete(correlationId);
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
    if (!record || entry.completions.size < record.expectedSiblings) return { kind: 'waiting' };
    this.finish(correlationId);
    const results = [...entry.completions.values()].map(({ value }) => ({
      goal: value.request.subagent_goal,
      answer: completionAnswer(value.request),
      sessionId: value.request.session_id,
    }));
    return { kind: 'complete', record, results, handles: handlesOf(entry) };
  }

  private finish(correlationId: string): void {
    this.pending.delete(correlationId);
    this.finished.add(correlationId);
    if (this.finished.size > FINISHED_REMEMBERED) {
      const oldest = this.finished.values().next().value;
      if (oldest !== undefined) this.finished.delete(oldest);
    }
  }
}

function handlesOf<H>(entry: Pending<H>): H[] {
  return [...(entry.record ? [entry.record.handle] : []), ...[...entry.completions.values()].map((c) => c.handle)];
}

/** The answer a completion carries: its `subagent-completion` step's observation (TrustGraph reads the first). */
export function completionAnswer(request: AgentRequest): string {
  return request.history.find((h) => h.step_type === SUBAGENT_COMPLETION)?.observation ?? '';
}
