/**
 * Hedged requests through the real RequestClient on the in-process bus, on a fake clock: a read-only call whose
 * first reply is overdue against its service's deadline is sent once more and the first answer wins; a call
 * that may act is sent once and ends at its own timeout.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RequestTimeoutError } from '../../../src/bus/errors.js';
import { HedgePolicy, type HedgeOutcome, type HedgeSettings } from '../../../src/bus/hedge-policy.js';
import { MemoryTransport } from '../../../src/bus/memory/memory-transport.js';
import { RequestClient, type RequestClientOptions } from '../../../src/bus/request-client.js';
import type { IncomingMessage, Producer } from '../../../src/bus/transport.js';
import { settle, type Settled, turns, until } from '../../support/event-loop-turns.js';
import { askClient, type Ask } from '../../support/ask-client.js';

interface Answer {
  answer: string;
  end: boolean;
}

const REQUEST = 'non-persistent://tg/request/model';
const RESPONSE = 'non-persistent://tg/response/model';
/** Cold (too few replies seen), the deadline is the ceiling: 1 s; each call's own timeout is 10 s. */
const SETTINGS: HedgeSettings = { quantile: 0.99, factor: 2, floorMs: 200, ceilingMs: 1_000, budget: 0.1 };
const TIMEOUT_MS = 10_000;

describe('hedged requests', () => {
  let bus: MemoryTransport;
  let replies: Producer;
  let received: IncomingMessage[];
  let outcomes: HedgeOutcome[];
  let policy: HedgePolicy;
  let client: RequestClient<Ask, Answer>;

  const makeClient = (options: Partial<RequestClientOptions<Ask, Answer>> = {}): RequestClient<Ask, Answer> =>
    askClient<Answer>({
      transport: bus,
      requestTopic: REQUEST,
      responseTopic: RESPONSE,
      timeoutMs: TIMEOUT_MS,
      repeatable: true,
      hedge: policy,
      ...options,
    });
  const reply = (m: IncomingMessage, answer: string, end = true): Promise<void> =>
    replies.send({ payload: Buffer.from(JSON.stringify({ answer, end })), properties: { id: m.properties.id! } });
  const question = (m: IncomingMessage): string => (JSON.parse(m.payload.toString()) as Ask).question;

  /** Asks `text`, lets `deadlineMs` pass, and waits for the request sent once more; the call's state. */
  async function overdue(text: string, deadlineMs = 1_000): Promise<Settled<Answer>> {
    const before = received.length;
    const call = settle(client.request({ question: text }));
    await until(() => received.length === before + 1);
    await vi.advanceTimersByTimeAsync(deadlineMs);
    await until(() => received.length === before + 2);
    return call;
  }

  beforeEach(async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    bus = new MemoryTransport();
    received = [];
    outcomes = [];
    policy = new HedgePolicy(SETTINGS, { outcome: (o) => outcomes.push(o) });
    replies = await bus.createProducer(RESPONSE);
    await bus.subscribe({
      topic: REQUEST,
      subscription: 'model-service',
      subscriptionType: 'Shared',
      handler: async (m) => {
        received.push(m);
        await m.ack();
      },
    });
    client = makeClient();
  });

  afterEach(async () => {
    await client.close();
    await bus.close();
    vi.useRealTimers();
  });

  it('sends an overdue read-only request once more, under a fresh id, and answers with the reply that comes first', async () => {
    const call = settle(client.request({ question: 'what is a pulsar?' }));
    await until(() => received.length === 1);
    await vi.advanceTimersByTimeAsync(999);
    await turns();
    expect(received).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => received.length === 2);
    const [first, second] = received as [IncomingMessage, IncomingMessage];
    expect(question(second)).toBe('what is a pulsar?');
    expect(second.properties.id).not.toBe(first.properties.id);

    await reply(second, 'a neutron star');
    await until(() => call.done);
    expect(call.value).toEqual({ answer: 'a neutron star', end: true });
    expect(outcomes).toEqual(['hedge_first']);
    // The first request's reply, late, is ignored (and acknowledged).
    await reply(first, 'too late');
    await turns();
    expect(bus.subscriptions(RESPONSE)[0]?.unacked).toBe(0);
    expect(received).toHaveLength(2);
  });

  it('answers with the first request\'s reply when it comes first after all; the second\'s is ignored', async () => {
    const call = await overdue('q');
    await reply(received[0]!, 'from the first');
    await until(() => call.done);
    await reply(received[1]!, 'from the second');
    await turns();
    expect(call.value).toEqual({ answer: 'from the first', end: true });
    expect(outcomes).toEqual(['original_first']);
  });

  it('reads a streamed answer from one request only, never mixed from two', async () => {
    const seen: string[] = [];
    const streamed = settle(
      (async () => {
        for await (const r of client.stream({ question: 'stream' }, { isLast: (x) => x.end })) seen.push(r.answer);
      })(),
    );
    await until(() => received.length === 1);
    await vi.advanceTimersByTimeAsync(1_000);
    await until(() => received.length === 2);
    const [first, second] = received as [IncomingMessage, IncomingMessage];
    await reply(second, 'h1', false);
    await until(() => seen.length === 1);
    // The first request starts answering too: none of it is read.
    await reply(first, 'o1', false);
    await reply(first, 'o2', true);
    await reply(second, 'h2', false);
    await reply(second, 'h3', true);
    await until(() => streamed.done);
    expect(streamed.error).toBeUndefined();
    expect(seen).toEqual(['h1', 'h2', 'h3']);
    expect(outcomes).toEqual(['hedge_first']);
  });

  it('stops waiting for a stream\'s next reply when its caller leaves after the first', async () => {
    const seen: string[] = [];
    const streamed = settle(
      (async () => {
        for await (const r of client.stream({ question: 'stream' }, { isLast: (x) => x.end })) {
          seen.push(r.answer);
          break;
        }
      })(),
    );
    await until(() => received.length === 1);
    await reply(received[0]!, 'first of many', false);
    await until(() => streamed.done);
    expect(seen).toEqual(['first of many']);
    // No wait for a further reply is left behind (it would hold the process until the gap timeout).
    expect(vi.getTimerCount()).toBe(0);
  });

  it('ends the call at the first request\'s own timeout when neither answers, not later', async () => {
    const call = await overdue('nobody home');
    await vi.advanceTimersByTimeAsync(TIMEOUT_MS - 1_000 - 1);
    await turns();
    expect(call.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => call.done);
    expect(call.error).toBeInstanceOf(RequestTimeoutError);
    expect(call.error).toMatchObject({ timeoutMs: TIMEOUT_MS, requestId: received[0]!.properties.id });
    expect(outcomes).toEqual(['neither']);
  });

  it('sends no second request when the deadline is not before the call\'s own timeout', async () => {
    const call = settle(client.request({ question: 'q' }, { timeoutMs: 1_000 }));
    await until(() => received.length === 1);
    await vi.advanceTimersByTimeAsync(1_000);
    await until(() => call.done);
    expect(call.error).toBeInstanceOf(RequestTimeoutError);
    expect(received).toHaveLength(1);
    expect(outcomes).toEqual([]);
  });

  it('sends no second request beyond its budget: a service slow as a whole is not given twice the work', async () => {
    const calls = Array.from({ length: 12 }, (_, i) => settle(client.request({ question: `q${i}` })));
    await until(() => received.length === 12);
    await vi.advanceTimersByTimeAsync(1_000);
    // The budget starts full, with a burst of 10 hedges; the calls themselves earned nothing more (it was full).
    await until(() => received.length === 22);
    await turns();
    expect(received).toHaveLength(22);
    expect(outcomes.filter((o) => o === 'over_budget')).toHaveLength(2);
    for (const m of received.slice(0, 12)) await reply(m, `re: ${question(m)}`);
    await until(() => calls.every((c) => c.done));
    expect(calls.map((c) => c.value?.answer)).toEqual(Array.from({ length: 12 }, (_, i) => `re: q${i}`));
  });

  it('learns the service\'s latency from every first reply: quick replies bring the deadline down to the floor', async () => {
    expect(policy.deadlineMs).toBe(1_000);
    for (let i = 0; i < 20; i++) {
      const call = client.request({ question: `q${i}` });
      await until(() => received.length === i + 1);
      await reply(received[i]!, 'quick');
      await call;
    }
    expect(policy.deadlineMs).toBe(200);
    // Now a request is sent once more after 200 ms.
    const call = await overdue('dropped', 200);
    await reply(received[21]!, 'recovered');
    await until(() => call.done);
    expect(call.value?.answer).toBe('recovered');
  });

  it('never hedges a client that may act: it is sent once and ends at its own timeout', async () => {
    expect(() => makeClient({ repeatable: false })).toThrow(/a request client that hedges must be repeatable/);
    const acting = makeClient({ repeatable: false, hedge: undefined });
    try {
      const call = settle(acting.request({ question: 'delete everything' }));
      await until(() => received.length === 1);
      await vi.advanceTimersByTimeAsync(TIMEOUT_MS);
      await until(() => call.done);
      expect(call.error).toBeInstanceOf(RequestTimeoutError);
      expect(received).toHaveLength(1);
      expect(outcomes).toEqual([]);
    } finally {
      await acting.close();
    }
  });
});
