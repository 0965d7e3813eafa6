import { describe, expect, it } from 'vitest';
import { FanIn, REJECTED, type Completion, type FanOutRecord } from '../../../../src/agent/orchestrator/fan-in.js';
import { makeAgentRequest, makeAgentStep } from '../../../../src/wire/index.js';

interface Handle {
  readonly messageId: string;
}

const sameMessage = (a: Handle, b: Handle): boolean => a.messageId === b.messageId;

function record(correlationId: string, expected: number, createdAt = 1_000): FanOutRecord {
  const template = makeAgentRequest({ question: 'Tell me about pulsars and quasars.', session_id: 'parent', correlation_id: correlationId, expected_siblings: expected });
  return { correlationId, id: 'client-1', createdAt, template, expectedSiblings: expected };
}

function completion(correlationId: string, goal: string, answer: string, session = `s-${goal}`, id = 'client-1'): Completion {
  const request = makeAgentRequest({
    question: goal,
    correlation_id: correlationId,
    subagent_goal: goal,
    session_id: session,
    history: [makeAgentStep({ thought: 'Subagent completed', action: 'complete', observation: answer, step_type: 'subagent-completion' })],
  });
  return { correlationId, id, request };
}

describe('FanIn: the aggregation state one key owner rebuilds from its messages', () => {
  it('completes once every distinct goal is in, with the results in arrival order and every held message to acknowledge', () => {
    const fanIn = new FanIn<Handle>(sameMessage);
    expect(fanIn.addRecord(record('c1', 2), { messageId: 'r' }).kind).toBe('waiting');
    expect(fanIn.addCompletion(completion('c1', 'What is a quasar?', 'Q'), { messageId: 'b' }).kind).toBe('waiting');
    const step = fanIn.addCompletion(completion('c1', 'What is a pulsar?', 'P'), { messageId: 'a' });
    expect(step.kind).toBe('complete');
    if (step.kind !== 'complete') return;
    expect(step.results).toEqual([
      { goal: 'What is a quasar?', answer: 'Q', sessionId: 's-What is a quasar?' },
      { goal: 'What is a pulsar?', answer: 'P', sessionId: 's-What is a pulsar?' },
    ]);
    expect(step.handles.map((h) => h.messageId)).toEqual(['r', 'b', 'a']);
    expect(step.record.id).toBe('client-1');
    expect(fanIn.size).toBe(0);
  });

  it('ignores a second completion of the same goal (to be acknowledged at once) and does not count it as a sibling', () => {
    const fanIn = new FanIn<Handle>(sameMessage);
    fanIn.addRecord(record('c1', 2), { messageId: 'r' });
    fanIn.addCompletion(completion('c1', 'g1', 'first'), { messageId: 'a' });
    const duplicate = fanIn.addCompletion(completion('c1', 'g1', 'second'), { messageId: 'a2' });
    expect(duplicate).toMatchObject({ kind: 'ignored', handle: { messageId: 'a2' } });
    const done = fanIn.addCompletion(completion('c1', 'g2', 'other'), { messageId: 'b' });
    expect(done.kind).toBe('complete');
    if (done.kind === 'complete') expect(done.results.map((r) => r.answer)).toEqual(['first', 'other']);
  });

  it('a redelivered copy of a held message replaces its handle instead of being acknowledged (the broker keeps it)', () => {
    const fanIn = new FanIn<Handle & { copy: number }>((a, b) => a.messageId === b.messageId);
    fanIn.addRecord(record('c1', 2), { messageId: 'r', copy: 1 });
    fanIn.addCompletion(completion('c1', 'g1', 'x'), { messageId: 'a', copy: 1 });
    expect(fanIn.addCompletion(completion('c1', 'g1', 'x'), { messageId: 'a', copy: 2 }).kind).toBe('waiting');
    expect(fanIn.addRecord(record('c1', 2), { messageId: 'r', copy: 2 }).kind).toBe('waiting');
    const done = fanIn.addCompletion(completion('c1', 'g2', 'y'), { messageId: 'b', copy: 1 });
    if (done.kind !== 'complete') throw new Error(`expected complete, got ${done.kind}`);
    expect(done.handles).toEqual([
      { messageId: 'r', copy: 2 },
      { messageId: 'a', copy: 2 },
      { messageId: 'b', copy: 1 },
    ]);
  });

  it('completions that arrive before their fan-out record wait for it', () => {
    const fanIn = new FanIn<Handle>(sameMessage);
    expect(fanIn.addCompletion(completion('c1', 'g1', 'x'), { messageId: 'a' }).kind).toBe('waiting');
    expect(fanIn.addCompletion(completion('c1', 'g2', 'y'), { messageId: 'b' }).kind).toBe('waiting');
    const step = fanIn.addRecord(record('c1', 2), { messageId: 'r' });
    expect(step.kind).toBe('complete');
    if (step.kind === 'complete') expect(step.handles.map((h) => h.messageId)).toEqual(['r', 'a', 'b']);
  });

  it('keeps correlations apart', () => {
    const fanIn = new FanIn<Handle>(sameMessage);
    fanIn.addRecord(record('c1', 1), { messageId: 'r1' });
    fanIn.addRecord(record('c2', 2), { messageId: 'r2' });
    expect(fanIn.addCompletion(completion('c2', 'g', 'x'), { messageId: 'a' }).kind).toBe('waiting');
    expect(fanIn.addCompletion(completion('c1', 'g', 'y'), { messageId: 'b' }).kind).toBe('complete');
    expect(fanIn.size).toBe(1);
  });

  it('after the end, late messages of that correlation are ignored, not held', () => {
    const fanIn = new FanIn<Handle>(sameMessage);
    fanIn.addRecord(record('c1', 1), { messageId: 'r' });
    fanIn.addCompletion(completion('c1', 'g', 'x'), { messageId: 'a' });
    expect(fanIn.addCompletion(completion('c1', 'g', 'x'), { messageId: 'a' }).kind).toBe('ignored');
    expect(fanIn.addRecord(record('c1', 1), { messageId: 'r' }).kind).toBe('ignored');
    expect(fanIn.size).toBe(0);
  });

  it('a reopened correlation (its end could not be published) is rebuilt from its redelivered messages', () => {
    const fanIn = new FanIn<Handle>(sameMessage);
    fanIn.addRecord(record('c1', 1), { messageId: 'r' });
    expect(fanIn.addCompletion(completion('c1', 'g', 'x'), { messageId: 'a' }).kind).toBe('complete');
    fanIn.reopen('c1');
    expect(fanIn.addRecord(record('c1', 1), { messageId: 'r' }).kind).toBe('waiting');
    expect(fanIn.addCompletion(completion('c1', 'g', 'x'), { messageId: 'a' }).kind).toBe('complete');
  });

  it('times a correlation out from its fan-out time (not from when this owner saw it), once, with what it held', () => {
    let now = 10_000;
    const fanIn = new FanIn<Handle>(sameMessage, () => now);
    // Rebuilt by a new owner long after the fan-out: the record's own time counts.
    fanIn.addRecord(record('c1', 3, 1_000), { messageId: 'r' });
    fanIn.addCompletion(completion('c1', 'g1', 'x'), { messageId: 'a' });
    fanIn.addRecord(record('c2', 2, 9_500), { messageId: 'r2' });
    const expired = fanIn.expire(5_000);
    expect(expired).toHaveLength(1);
    expect(expired[0]).toMatchObject({ correlationId: 'c1', id: 'client-1', received: 1 });
    expect(expired[0]!.handles.map((h) => h.messageId)).toEqual(['r', 'a']);
    expect(fanIn.expire(5_000)).toEqual([]);
    expect(fanIn.addCompletion(completion('c1', 'g2', 'late'), { messageId: 'b' }).kind).toBe('ignored');
    now = 20_000;
    expect(fanIn.expire(5_000).map((e) => e.correlationId)).toEqual(['c2']);
  });

  it('completions whose record never comes end after the orphan grace from their first arrival, naming the client from the completion', () => {
    let now = 0;
    const fanIn = new FanIn<Handle>(sameMessage, () => now);
    fanIn.addCompletion(completion('c9', 'g', 'x'), { messageId: 'a' });
    now = 1_500;
    expect(fanIn.expire(300_000, 2_000)).toEqual([]);
    now = 2_500;
    expect(fanIn.expire(300_000, 2_000)).toEqual([expect.objectContaining({ correlationId: 'c9', id: 'client-1', received: 1 })]);
    expect(fanIn.expire(300_000, 2_000)[0]?.record).toBeUndefined();
  });

  it('reset forgets what is held, returning it (it goes back to the broker), and the redelivery rebuilds it', () => {
    const fanIn = new FanIn<Handle>(sameMessage);
    fanIn.addRecord(record('c1', 2), { messageId: 'r' });
    fanIn.addCompletion(completion('c1', 'g1', 'x'), { messageId: 'a' });
    fanIn.addCompletion(completion('c2', 'g1', 'y'), { messageId: 'b' });
    expect(fanIn.reset().map((h) => h.messageId)).toEqual(['r', 'a', 'b']);
    expect(fanIn.size).toBe(0);
    fanIn.addRecord(record('c1', 2), { messageId: 'r' });
    fanIn.addCompletion(completion('c1', 'g1', 'x'), { messageId: 'a' });
    expect(fanIn.addCompletion(completion('c1', 'g2', 'y'), { messageId: 'b' }).kind).toBe('complete');
  });

  describe('every conversation that sent a completion gets one end', () => {
    it('a completion from another conversation after the correlation ended is rejected (its own dialog ends), a late one of the same conversation ignored', () => {
      let now = 0;
      const fanIn = new FanIn<Handle>(sameMessage, () => now);
      fanIn.addCompletion(completion('c1', '', 'x'), { messageId: 'a' });
      now = 6_000;
      expect(fanIn.expire(300_000, 5_000).map((e) => e.id)).toEqual(['client-1']);
      // The same payload sent again by another client (or replayed): it must not vanish.
      expect(fanIn.addCompletion(completion('c1', '', 'x', 's', 'client-2'), { messageId: 'b' })).toEqual({
        kind: 'rejected',
        id: 'client-2',
        reason: REJECTED.ended,
        handles: [{ messageId: 'b' }],
      });
      expect(fanIn.addCompletion(completion('c1', '', 'x', 's', 'client-2'), { messageId: 'b2' }).kind).toBe('ignored');
      expect(fanIn.addCompletion(completion('c1', 'g', 'late'), { messageId: 'c' }).kind).toBe('ignored');
      expect(fanIn.size).toBe(0);
    });

    it('remembers a long correlation id that ended as well (by its digest)', () => {
      let now = 0;
      const fanIn = new FanIn<Handle>(sameMessage, () => now);
      const long = 'c'.repeat(100_000);
      fanIn.addCompletion(completion(long, 'g', 'x'), { messageId: 'a' });
      now = 6_000;
      expect(fanIn.expire(300_000, 5_000).map((e) => e.correlationId)).toEqual([long]);
      expect(fanIn.addCompletion(completion(long, 'g', 'x'), { messageId: 'a2' }).kind).toBe('ignored');
      expect(fanIn.addCompletion(completion(long, 'g', 'x', 's', 'client-2'), { messageId: 'b' }).kind).toBe('rejected');
      expect(fanIn.addCompletion(completion(`${long}d`, 'g', 'x', 's', 'client-2'), { messageId: 'c' }).kind).toBe('waiting');
    });

    it('a completion from another conversation cannot join a held fan-out: rejected at once, the fan-out still completes', () => {
      const fanIn = new FanIn<Handle>(sameMessage);
      fanIn.addRecord(record('c1', 2), { messageId: 'r' });
      fanIn.addCompletion(completion('c1', 'g1', 'x'), { messageId: 'a' });
      expect(fanIn.addCompletion(completion('c1', 'g2', 'forged', 's', 'intruder'), { messageId: 'f' })).toMatchObject({
        kind: 'rejected',
        id: 'intruder',
        reason: REJECTED.otherConversation,
      });
      const done = fanIn.addCompletion(completion('c1', 'g2', 'y'), { messageId: 'b' });
      if (done.kind !== 'complete') throw new Error(`expected complete, got ${done.kind}`);
      expect(done.results.map((r) => r.answer)).toEqual(['x', 'y']);
    });

    it('without a record, completions of a second conversation are rejected at once; the first waits out its grace', () => {
      let now = 0;
      const fanIn = new FanIn<Handle>(sameMessage, () => now);
      expect(fanIn.addCompletion(completion('c1', '', 'x'), { messageId: 'a' }).kind).toBe('waiting');
      expect(fanIn.addCompletion(completion('c1', '', 'x', 's', 'client-2'), { messageId: 'b' })).toMatchObject({
        kind: 'rejected',
        id: 'client-2',
        reason: REJECTED.otherCompletions,
      });
      now = 6_000;
      expect(fanIn.expire(300_000, 5_000)).toEqual([expect.objectContaining({ id: 'client-1', handles: [{ messageId: 'a' }] })]);
    });

    it("a record that arrives after another conversation's completions rejects them and waits for its own", () => {
      const fanIn = new FanIn<Handle>(sameMessage);
      fanIn.addCompletion(completion('c1', 'g1', 'forged', 's', 'intruder'), { messageId: 'f1' });
      fanIn.addCompletion(completion('c1', 'g2', 'forged', 's', 'intruder'), { messageId: 'f2' });
      expect(fanIn.addRecord(record('c1', 1), { messageId: 'r' })).toEqual({
        kind: 'rejected',
        id: 'intruder',
        reason: REJECTED.otherConversation,
        handles: [{ messageId: 'f1' }, { messageId: 'f2' }],
      });
      const done = fanIn.addCompletion(completion('c1', 'g1', 'real'), { messageId: 'a' });
      if (done.kind !== 'complete') throw new Error(`expected complete, got ${done.kind}`);
      expect(done.handles.map((h) => h.messageId)).toEqual(['r', 'a']);
    });
  });

  describe('a cancelled fan-out (its supervisor could not publish every subagent request)', () => {
    it('acknowledges its completions held so far, drops later ones as late, and ends silently at its time', () => {
      let now = 1_000;
      const fanIn = new FanIn<Handle>(sameMessage, () => now);
      fanIn.addRecord(record('c1', 2), { messageId: 'r' });
      fanIn.addCompletion(completion('c1', 'g1', 'x'), { messageId: 'a' });
      expect(fanIn.addCancel({ correlationId: 'c1', id: 'client-1' }, { messageId: 'k' })).toEqual({ kind: 'cancelled', id: 'client-1', handles: [{ messageId: 'a' }] });
      // Every sibling in would complete it; cancelled, nothing is synthesised.
      expect(fanIn.addCompletion(completion('c1', 'g2', 'y'), { messageId: 'b' })).toEqual({ kind: 'ignored', handle: { messageId: 'b' }, reason: REJECTED.cancelled, late: true });
      now = 400_000;
      expect(fanIn.expire(300_000)).toEqual([expect.objectContaining({ correlationId: 'c1', cancelled: true, handles: [{ messageId: 'r' }, { messageId: 'k' }] })]);
      // After its end, its completions are still dropped as late, not rejected with a second error.
      expect(fanIn.addCompletion(completion('c1', 'g2', 'y'), { messageId: 'c' })).toMatchObject({ kind: 'ignored', late: true });
    });

    it('a cancel before the record (a redelivery out of order) still holds the record back from completing', () => {
      const fanIn = new FanIn<Handle>(sameMessage);
      expect(fanIn.addCancel({ correlationId: 'c1', id: 'client-1' }, { messageId: 'k' })).toMatchObject({ kind: 'cancelled', handles: [] });
      expect(fanIn.addRecord(record('c1', 1), { messageId: 'r' }).kind).toBe('waiting');
      expect(fanIn.addCompletion(completion('c1', 'g1', 'x'), { messageId: 'a' })).toMatchObject({ kind: 'ignored', late: true });
    });

    it("ignores a cancel from another conversation than the record's", () => {
      const fanIn = new FanIn<Handle>(sameMessage);
      fanIn.addRecord(record('c1', 1), { messageId: 'r' });
      expect(fanIn.addCancel({ correlationId: 'c1', id: 'intruder' }, { messageId: 'k' })).toMatchObject({ kind: 'ignored' });
      expect(fanIn.addCompletion(completion('c1', 'g1', 'x'), { messageId: 'a' }).kind).toBe('complete');
    });
  });
});
