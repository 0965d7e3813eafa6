/**
 * RequestClient with a bound on its requests in flight (call-slots.ts), on the in-process bus and a fake clock:
 * a burst reaches the service no larger than the limit and in the order it was made, the wait for a slot counts
 * in the call's timeout, and every way a call ends gives its slot back.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CallSlots } from '../../../src/bus/call-slots.js';
import { CallQueueTimeoutError, ConnectionLostError, RequestTimeoutError, TransportClosedError } from '../../../src/bus/errors.js';
import { HedgePolicy, type HedgeOutcome } from '../../../src/bus/hedge-policy.js';
import { MemoryTransport } from '../../../src/bus/memory/memory-transport.js';
import { RequestClient, type RequestClientOptions } from '../../../src/bus/request-client.js';
import type { IncomingMessage, Producer } from '../../../src/bus/transport.js';
import { settle, turns, until } from '../../support/event-loop-turns.js';
import { askClient, type Ask } from '../../support/ask-client.js';

interface Answer {
  answer: string;
  end: boolean;
}

const REQUEST = 'non-persistent://tg/request/prompt';
const RESPONSE = 'non-persistent://tg/response/prompt';
const TIMEOUT_MS = 1_000;

describe('RequestClient with a bound on its requests in flight', () => {
  let bus: MemoryTransport;
  let replies: Producer;
  /** Requests the stand-in service took and has not answered, in the order they came. */
  let waiting: IncomingMessage[];
  let received: IncomingMessage[];
  let slots: CallSlots;
  let client: RequestClient<Ask, Answer>;

  const makeClient = (options: Partial<RequestClientOptions<Ask, Answer>> = {}): RequestClient<Ask, Answer> =>
    askClient<Answer>({
      transport: bus,
      requestTopic: REQUEST,
      responseTopic: RESPONSE,
      timeoutMs: TIMEOUT_MS,
      slots,
      ...options,
    });
  const question = (m: IncomingMessage): string => (JSON.parse(m.payload.toString()) as Ask).question;
  const reply = (m: IncomingMessage, body: Answer | string = { answer: `re: ${question(m)}`, end: true }): Promise<void> =>
    replies.send({ payload: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)), properties: { id: m.properties.id! } });
  /** Answers the oldest request the service holds. */
  const answerOldest = async (): Promise<void> => reply(waiting.shift()!);
  const use = (): [number, number] => [slots.inFlight, slots.queued];

  beforeEach(async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    bus = new MemoryTransport();
    waiting = [];
    received = [];
    slots = new CallSlots({ limit: 3, service: 'prompt', advice: 'raise --service-max-in-flight, or lower --concurrency' });
    replies = await bus.createProducer(RESPONSE);
    await bus.subscribe({
      topic: REQUEST,
      subscription: 'prompt-service',
      subscriptionType: 'Shared',
      handler: async (m) => {
        received.push(m);
        waiting.push(m);
        await m.ack();
      },
    });
    client = makeClient();
    await client.start();
  });

  afterEach(async () => {
    await client.close();
    await bus.close();
    vi.useRealTimers();
  });

  it('sends at most the limit of a burst at once, the rest in the order they were made, each as a slot comes back', async () => {
    const calls = Array.from({ length: 10 }, (_, i) => settle(client.request({ question: `q${i}` })));
    await turns();
    expect(received.map(question)).toEqual(['q0', 'q1', 'q2']);
    expect(use()).toEqual([3, 7]);
    let mostAtOnce = 0;
    while (calls.some((c) => !c.done)) {
      mostAtOnce = Math.max(mostAtOnce, waiting.length);
      if (waiting.length > 0) await answerOldest();
      await turns(20);
    }
    expect(mostAtOnce).toBe(3);
    expect(received.map(question)).toEqual(Array.from({ length: 10 }, (_, i) => `q${i}`));
    expect(calls.map((c) => c.value?.answer)).toEqual(Array.from({ length: 10 }, (_, i) => `re: q${i}`));
    expect(use()).toEqual([0, 0]);
  });

  it('holds the limit across every client of the topic that shares the slots', async () => {
    const other = makeClient();
    await other.start();
    try {
      const calls = [0, 1, 2, 3].flatMap((i) => [settle(client.request({ question: `a${i}` })), settle(other.request({ question: `b${i}` }))]);
      await turns();
      expect(received).toHaveLength(3);
      expect(use()).toEqual([3, 5]);
      while (calls.some((c) => !c.done)) {
        expect(waiting.length).toBeLessThanOrEqual(3);
        if (waiting.length > 0) await answerOldest();
        await turns(20);
      }
      expect(received.map(question)).toEqual(['a0', 'b0', 'a1', 'b1', 'a2', 'b2', 'a3', 'b3']);
    } finally {
      await other.close();
    }
  });

  it('fails a call still waiting for a slot at its timeout, never sent, saying which service, the limit, the queue and what to do', async () => {
    const held = [0, 1, 2].map((i) => settle(client.request({ question: `held${i}` }, { timeoutMs: 60_000 })));
    const queued = settle(client.request({ question: 'queued' }));
    const behind = settle(client.request({ question: 'behind' }, { timeoutMs: 60_000 }));
    await turns();
    expect(use()).toEqual([3, 2]);
    await vi.advanceTimersByTimeAsync(TIMEOUT_MS);
    await until(() => queued.done);
    expect(queued.error).toBeInstanceOf(CallQueueTimeoutError);
    expect(queued.error).toBeInstanceOf(RequestTimeoutError);
    expect(queued.error).toMatchObject({ code: 'TG_REQUEST_QUEUE_TIMEOUT', retriable: true, requestTopic: REQUEST, timeoutMs: TIMEOUT_MS });
    expect(String(queued.error)).toMatch(
      /to the prompt service \(non-persistent:\/\/tg\/request\/prompt\) waited 1000 ms for one of the 3 places in flight and was never sent: 3 requests were in flight and 2 waiting, this one among them\. .*raise --service-max-in-flight, or lower --concurrency/,
    );
    expect(received.map(question)).toEqual(['held0', 'held1', 'held2']);
    expect(use()).toEqual([3, 1]);
    // The call behind the one that timed out moves up and is sent with the next free slot.
    await answerOldest();
    await until(() => received.length === 4);
    expect(question(received[3]!)).toBe('behind');
    expect(held.map((c) => c.done)).toEqual([true, false, false]);
    expect(behind.done).toBe(false);
  });

  it('counts the wait for a slot in the call\'s timeout: sent late, it waits only what is left for its reply', async () => {
    await client.close();
    slots = new CallSlots({ limit: 1, service: 'prompt', advice: 'do something' });
    client = makeClient();
    const holder = settle(client.request({ question: 'holder' }, { timeoutMs: 60_000 }));
    const late = settle(client.request({ question: 'late' }));
    await until(() => received.some((m) => question(m) === 'holder'));
    await vi.advanceTimersByTimeAsync(600);
    await reply(received.find((m) => question(m) === 'holder')!);
    await until(() => received.some((m) => question(m) === 'late'));
    await vi.advanceTimersByTimeAsync(399);
    await turns();
    expect(late.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => late.done);
    // Sent, so a timeout like any other: 1000 ms in all, not 600 in the queue and 1000 more.
    expect(late.error).toBeInstanceOf(RequestTimeoutError);
    expect(late.error).not.toBeInstanceOf(CallQueueTimeoutError);
    expect(String(late.error)).toMatch(/no response to request \S+ on non-persistent:\/\/tg\/request\/prompt within 1000 ms/);
    expect(holder.value?.answer).toBe('re: holder');
    expect(use()).toEqual([0, 0]);
  });

  it('gives the slot back however a call ends: a reply, a timeout, an undecodable reply, a stream left early', async () => {
    const answered = settle(client.request({ question: 'answered' }));
    const timedOut = settle(client.request({ question: 'timed out' }, { timeoutMs: 500 }));
    const garbled = settle(client.request({ question: 'garbled' }));
    const streamed = (async () => {
      for await (const answer of client.stream({ question: 'streamed' }, { isLast: (r) => r.end })) return answer.answer;
      return undefined;
    })();
    await turns();
    expect(use()).toEqual([3, 1]);
    const byQuestion = (q: string): IncomingMessage => received.find((m) => question(m) === q)!;
    await reply(byQuestion('answered'));
    await until(() => answered.done && received.length === 4);
    await reply(byQuestion('garbled'), 'not json');
    await until(() => garbled.done);
    expect(garbled.error).toBeDefined();
    await vi.advanceTimersByTimeAsync(500);
    await until(() => timedOut.done);
    expect(timedOut.error).toBeInstanceOf(RequestTimeoutError);
    await reply(byQuestion('streamed'), { answer: 'first part', end: false });
    await expect(streamed).resolves.toBe('first part');
    expect(use()).toEqual([0, 0]);
  });

  it('on close fails the calls in flight and those waiting at once, and leaves no slot taken', async () => {
    const calls = Array.from({ length: 6 }, (_, i) => settle(client.request({ question: `q${i}` }, { timeoutMs: 600_000 })));
    await turns();
    expect(use()).toEqual([3, 3]);
    await client.close();
    await until(() => calls.every((c) => c.done));
    expect(calls.every((c) => c.error instanceof TransportClosedError)).toBe(true);
    expect(received).toHaveLength(3);
    expect(use()).toEqual([0, 0]);
  });

  it('sends a call lost with the connection once more in a slot of its own, and leaves those still waiting for one queued', async () => {
    await client.close();
    slots = new CallSlots({ limit: 1, service: 'prompt', advice: 'do something' });
    client = makeClient({ repeatable: true, timeoutMs: 600_000 });
    const lost = settle(client.request({ question: 'lost' }));
    const queued = settle(client.request({ question: 'queued' }));
    await until(() => received.length === 1);
    bus.dropConnection();
    await turns();
    bus.restoreConnection();
    await until(() => received.length === 2);
    // The lost call's slot went to the call queued behind it (never sent, so nothing of it was lost), and the lost
    // call, sent once more, waits for a slot of its own.
    expect(received.map(question)).toEqual(['lost', 'queued']);
    expect(use()).toEqual([1, 1]);
    await reply(received[1]!);
    await until(() => queued.done && received.length === 3);
    expect(question(received[2]!)).toBe('lost');
    await reply(received[2]!);
    await until(() => lost.done);
    expect([lost.value?.answer, queued.value?.answer]).toEqual(['re: lost', 're: queued']);
    expect(lost.error).toBeUndefined();
    expect(use()).toEqual([0, 0]);
  });

  it('fails a call that may act, lost with the connection, and frees its slot for the next', async () => {
    await client.close();
    slots = new CallSlots({ limit: 1, service: 'mcp-tool', advice: 'do something' });
    client = makeClient({ timeoutMs: 600_000 });
    const lost = settle(client.request({ question: 'acts' }));
    const next = settle(client.request({ question: 'next' }));
    await until(() => received.length === 1);
    bus.dropConnection();
    await turns();
    bus.restoreConnection();
    await until(() => lost.done && received.length === 2);
    expect(lost.error).toBeInstanceOf(ConnectionLostError);
    expect(question(received[1]!)).toBe('next');
    await reply(received[1]!);
    await until(() => next.done);
    expect(use()).toEqual([0, 0]);
  });

  describe('hedged', () => {
    let outcomes: HedgeOutcome[];
    let policy: HedgePolicy;

    beforeEach(async () => {
      await client.close();
      outcomes = [];
      // Cold, the deadline is the ceiling: 1 s; each call's own timeout is 10 s.
      policy = new HedgePolicy({ quantile: 0.99, factor: 2, floorMs: 200, ceilingMs: 1_000, budget: 1 }, { outcome: (o) => outcomes.push(o) });
      client = makeClient({ repeatable: true, hedge: policy, timeoutMs: 10_000 });
    });

    it('sends the second sending of an overdue call in a slot of its own and gives both back when one answers', async () => {
      const call = settle(client.request({ question: 'slow' }));
      await until(() => received.length === 1);
      await vi.advanceTimersByTimeAsync(1_000);
      await until(() => received.length === 2);
      expect(use()).toEqual([2, 0]);
      await reply(received[1]!);
      await until(() => call.done);
      await turns();
      expect(call.value?.answer).toBe('re: slow');
      expect(outcomes).toEqual(['hedge_first']);
      expect(use()).toEqual([0, 0]);
    });

    it('sends no call once more while calls to the service wait for a slot: it has all of ours it may take', async () => {
      const holders = [0, 1, 2].map((i) => settle(client.request({ question: `h${i}` })));
      const queued = settle(client.request({ question: 'queued' }));
      await until(() => received.length === 3);
      // All four are overdue now, the three sent and the one waiting: none is sent again.
      await vi.advanceTimersByTimeAsync(1_000);
      await turns();
      expect(received).toHaveLength(3);
      expect(use()).toEqual([3, 1]);
      for (const m of [...received]) await reply(m);
      await until(() => holders.every((h) => h.done) && received.length === 4);
      expect(question(received[3]!)).toBe('queued');
      await reply(received[3]!);
      await until(() => queued.done);
      await turns();
      expect(received).toHaveLength(4);
      expect(queued.value?.answer).toBe('re: queued');
      expect(outcomes).toEqual([]);
      expect(use()).toEqual([0, 0]);
    });
  });
});
