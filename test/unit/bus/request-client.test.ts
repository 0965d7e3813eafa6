import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConnectionLostError, RequestTimeoutError, TransportClosedError, UnacknowledgedSendError } from '../../../src/bus/errors.js';
import { MemoryTransport } from '../../../src/bus/memory/memory-transport.js';
import { RequestClient, type RequestClientOptions } from '../../../src/bus/request-client.js';
import type { IncomingMessage, Producer, ProducerOptions, Transport } from '../../../src/bus/transport.js';
import { WireDecodeError } from '../../../src/wire/errors.js';
import { turns, until } from '../../support/event-loop-turns.js';
import { askClient, type Ask } from '../../support/ask-client.js';

interface Answer {
  answer: string | null;
  end: boolean;
}

const REQUEST = 'non-persistent://tg/request/echo';
const RESPONSE = 'non-persistent://tg/response/echo';

describe('RequestClient', () => {
  let bus: MemoryTransport;
  let replies: Producer;
  let received: IncomingMessage[];
  let client: RequestClient<Ask, Answer>;

  /** A stand-in service: records requests; the test answers them through `reply`. */
  async function startResponder(onRequest?: (m: IncomingMessage) => Promise<void> | void): Promise<void> {
    replies = await bus.createProducer(RESPONSE);
    await bus.subscribe({
      topic: REQUEST,
      subscription: 'echo-service',
      subscriptionType: 'Shared',
      handler: async (m) => {
        received.push(m);
        await m.ack();
        await onRequest?.(m);
      },
    });
  }

  /**
   * Runs `test` on a fake clock (replies come when the test says, however busy the machine is) with a responder
   * that keeps each request for the test to answer; `requested()` resolves with the latest one once it came.
   */
  async function onFakeClock(test: (requested: () => Promise<IncomingMessage>) => Promise<void>): Promise<void> {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      let request: IncomingMessage | undefined;
      await startResponder((m) => {
        request = m;
      });
      await test(async () => {
        await until(() => request !== undefined);
        return request!;
      });
    } finally {
      vi.useRealTimers();
    }
  }

  const reply = (id: string | undefined, body: Answer | string): Promise<void> =>
    replies.send({
      payload: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
      properties: id === undefined ? {} : { id },
    });
  const question = (m: IncomingMessage): string => (JSON.parse(m.payload.toString()) as Ask).question;

  /** A client of the echo service on `bus`, with a 1 s timeout unless `options` say otherwise. */
  const echoClient = (options: Partial<RequestClientOptions<Ask, Answer>> = {}): RequestClient<Ask, Answer> =>
    askClient<Answer>({
      transport: bus,
      requestTopic: REQUEST,
      responseTopic: RESPONSE,
      timeoutMs: 1000,
      ...options,
    });

  /** The request's error, or undefined when it was answered. */
  const failureOf = (request: Promise<Answer>): Promise<unknown> =>
    request.then(
      () => undefined,
      (error: unknown) => error,
    );
  /** Streams `text`, pushing each answer onto `seen`; resolves with the stream's error, or undefined. */
  const streamInto = async (seen: string[], text: string, options: { timeoutMs?: number } = {}): Promise<unknown> => {
    try {
      for await (const answer of client.stream({ question: text }, { ...options, isLast: (r) => r.end })) seen.push(answer.answer ?? '');
    } catch (error) {
      return error;
    }
    return undefined;
  };

  beforeEach(() => {
    bus = new MemoryTransport();
    received = [];
    client = echoClient();
  });

  afterEach(async () => {
    await client.close();
    await bus.close();
  });

  it('subscribes Exclusive under a fresh rr- subscription on start', async () => {
    await client.start();
    await client.start();
    expect(client.subscriptionName).toMatch(/^rr-[0-9a-f]{12}$/);
    expect(bus.subscriptions(RESPONSE)).toMatchObject([{ name: client.subscriptionName, type: 'Exclusive', consumers: 1 }]);
  });

  it('matches each reply to its request by id, whatever the order of the replies', async () => {
    await startResponder();
    const first = client.request({ question: 'first' });
    const second = client.request({ question: 'second' });
    await expect.poll(() => received.length).toBe(2);
    const ids = received.map((m) => m.properties.id);
    expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids[0]).not.toBe(ids[1]);
    for (const m of [...received].reverse()) await reply(m.properties.id, { answer: `re: ${question(m)}`, end: true });
    await expect(first).resolves.toEqual({ answer: 're: first', end: true });
    await expect(second).resolves.toEqual({ answer: 're: second', end: true });
  });

  it('resolves with the first reply and acks the ones after it', async () => {
    await startResponder(async (m) => {
      await reply(m.properties.id, { answer: 'one', end: false });
      await reply(m.properties.id, { answer: 'two', end: true });
    });
    await expect(client.request({ question: 'q' })).resolves.toEqual({ answer: 'one', end: false });
    await turns();
    expect(bus.subscriptions(RESPONSE)[0]?.unacked).toBe(0);
  });

  it('streams every reply for the request until the end flag', async () => {
    await startResponder(async (m) => {
      await reply(m.properties.id, { answer: 'a', end: false });
      await reply(m.properties.id, { answer: 'b', end: false });
      await reply(m.properties.id, { answer: 'c', end: true });
      await reply(m.properties.id, { answer: 'after the end', end: true });
    });
    const answers: Array<string | null> = [];
    for await (const res of client.stream({ question: 'q' }, { isLast: (r) => r.end })) answers.push(res.answer);
    expect(answers).toEqual(['a', 'b', 'c']);
  });

  it('applies the timeout to each wait in a stream, not to the whole exchange', async () => {
    // A fake clock: each reply comes 60 ms after the one before (under the 100 ms timeout), 240 ms in all (over
    // it), however busy the machine is.
    await onFakeClock(async (requested) => {
      const answers: Array<string | null> = [];
      let ended = false;
      const streamed = (async () => {
        for await (const res of client.stream({ question: 'q' }, { isLast: (r) => r.end, timeoutMs: 100 })) {
          answers.push(res.answer);
        }
      })().finally(() => {
        ended = true;
      });
      const request = await requested();
      for (const [index, answer] of ['a', 'b', 'c', 'd'].entries()) {
        await vi.advanceTimersByTimeAsync(60);
        await reply(request.properties.id, { answer, end: answer === 'd' });
        await until(() => answers.length === index + 1 || ended);
      }
      await streamed;
      expect(answers).toEqual(['a', 'b', 'c', 'd']);
    });
  });

  it('fails a stream that goes quiet with a RequestTimeoutError saying how many replies came', async () => {
    await startResponder(async (m) => {
      await reply(m.properties.id, { answer: 'a', end: false });
    });
    const answers: Array<string | null> = [];
    const run = async (): Promise<void> => {
      // The first reply may wait as long as a loaded machine needs (a 50 ms first wait failed in a busy CI run);
      // the silence after it is what is timed.
      for await (const res of client.stream({ question: 'q' }, { isLast: (r) => r.end, timeoutMs: 30_000, gapTimeoutMs: 50 })) {
        answers.push(res.answer);
      }
    };
    const error = await run().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect(error).toMatchObject({ requestTopic: REQUEST, timeoutMs: 50, received: 1 });
    expect(answers).toEqual(['a']);
  });

  it('waits its first-reply timeout for the first reply and its gap timeout after it', async () => {
    // Fake clock: the first reply after 900 ms (under the 1000 ms first wait), then silence: the stream fails
    // 100 ms later (the gap), not 1000 ms later.
    await onFakeClock(async (requested) => {
      const answers: Array<string | null> = [];
      let failure: unknown;
      const streamed = (async () => {
        for await (const res of client.stream({ question: 'q' }, { isLast: (r) => r.end, timeoutMs: 1_000, gapTimeoutMs: 100 })) {
          answers.push(res.answer);
        }
      })().catch((error: unknown) => {
        failure = error;
      });
      const request = await requested();
      await vi.advanceTimersByTimeAsync(900);
      await reply(request.properties.id, { answer: 'a', end: false });
      await until(() => answers.length === 1);
      await vi.advanceTimersByTimeAsync(99);
      expect(failure).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      await streamed;
      expect(failure).toBeInstanceOf(RequestTimeoutError);
      expect(failure).toMatchObject({ timeoutMs: 100, received: 1 });
      expect((failure as Error).message).toMatch(/^no further response to request \S+ on \S+ within 100 ms \(after 1 replies\)$/);
    });
  });

  it('times out a request nobody answers, naming the request topic and the timeout', async () => {
    await startResponder();
    const pending = client.request({ question: 'hello?' }, { timeoutMs: 30 });
    await expect(pending).rejects.toBeInstanceOf(RequestTimeoutError);
    await expect(pending).rejects.toThrow(`on ${REQUEST} within 30 ms`);
  });

  it('acks and ignores replies with unknown or missing ids, even undecodable ones', async () => {
    await startResponder(async (m) => {
      await reply('someone-else', { answer: 'not yours', end: true });
      await reply(undefined, { answer: 'no id', end: true });
      await reply('someone-else', 'not json');
      await reply(m.properties.id, { answer: 'yours', end: true });
    });
    await expect(client.request({ question: 'q' })).resolves.toEqual({ answer: 'yours', end: true });
    await turns();
    expect(bus.subscriptions(RESPONSE)[0]?.unacked).toBe(0);
  });

  it('fails the request with the WireDecodeError when its reply cannot be decoded', async () => {
    await startResponder(async (m) => {
      await reply(m.properties.id, '{"answer": ');
    });
    await expect(client.request({ question: 'q' })).rejects.toBeInstanceOf(WireDecodeError);
    const stream = client.stream({ question: 'q' }, { isLast: (r) => r.end });
    await expect(stream.next()).rejects.toThrow(/Cannot decode Answer/);
  });

  it('fails pending requests and removes its subscription on close', async () => {
    await startResponder();
    const pending = client.request({ question: 'q' });
    await expect.poll(() => received.length).toBe(1);
    await client.close();
    await expect(pending).rejects.toBeInstanceOf(TransportClosedError);
    expect(bus.subscriptions(RESPONSE)).toEqual([]);
    await expect(client.request({ question: 'again' })).rejects.toBeInstanceOf(TransportClosedError);
  });

  it('stops listening when the caller leaves a stream early', async () => {
    await startResponder(async (m) => {
      await reply(m.properties.id, { answer: 'a', end: false });
      await reply(m.properties.id, { answer: 'b', end: false });
    });
    for await (const res of client.stream({ question: 'q' }, { isLast: () => false, timeoutMs: 30_000 })) {
      expect(res.answer).toBe('a');
      break;
    }
    await turns();
    expect(bus.subscriptions(RESPONSE)[0]?.unacked).toBe(0);
  });

  it('checks its timeout where it is configured', () => {
    expect(() => echoClient({ timeoutMs: 0 })).toThrow(/timeoutMs must be a finite number greater than 0/);
  });

  it('tells its observer how each call ended: ok, the reply\'s own error type, or a timeout', async () => {
    const ended: { status: string; errorType?: string; seconds: number }[] = [];
    const observed = echoClient({ observer: { errorOf: (r) => (r.answer === null ? 'no-answer' : undefined), ended: (o) => ended.push(o) } });
    await startResponder(async (m) => {
      const q = question(m);
      if (q === 'silent') return;
      await reply(m.properties.id, { answer: q === 'fail' ? null : 'fine', end: true });
    });
    try {
      await observed.request({ question: 'hi' });
      await observed.request({ question: 'fail' });
      await expect(observed.request({ question: 'silent' }, { timeoutMs: 30 })).rejects.toBeInstanceOf(RequestTimeoutError);
      for await (const answer of observed.stream({ question: 'streamed' }, { isLast: (r) => r.end })) void answer;
      expect(ended.map((e) => [e.status, e.errorType])).toEqual([
        ['ok', undefined],
        ['error', 'no-answer'],
        ['timeout', undefined],
        ['ok', undefined],
      ]);
      expect(ended.every((e) => e.seconds >= 0 && e.seconds < 5)).toBe(true);
    } finally {
      await observed.close();
    }
  });

  describe('when the broker connection is lost while requests wait', () => {
    it('fails every waiting request and stream once the connection is back, long before their timeout', async () => {
      const patient = { timeoutMs: 600_000 };
      await startResponder();
      const single = failureOf(client.request({ question: 'lost' }, patient));
      const seen: string[] = [];
      const stream = streamInto(seen, 'streamed', patient);
      await expect.poll(() => received.length).toBe(2);
      const streamed = received.find((m) => question(m) === 'streamed') as IncomingMessage;
      await reply(streamed.properties.id, { answer: 'part', end: false });
      await until(() => seen.length === 1);

      let settled = false;
      void single.then(() => (settled = true));
      bus.dropConnection();
      await turns();
      // Still waiting while the connection is down: a reply may yet come on a connection that never dropped.
      expect(settled).toBe(false);
      bus.restoreConnection();

      const error = await single;
      expect(error).toBeInstanceOf(ConnectionLostError);
      expect(error).toMatchObject({ retriable: true, code: 'TG_TRANSPORT_CONNECTION_LOST', requestTopic: REQUEST });
      expect(String(error)).toMatch(/connection was lost while request \S+ on non-persistent:\/\/tg\/request\/echo waited for its response/);
      const streamError = await stream;
      expect(seen).toEqual(['part']);
      expect(streamError).toBeInstanceOf(ConnectionLostError);
      expect(String(streamError)).toMatch(/next response \(after 1 replies\)/);
    });

    describe('for a service that only reads (repeatable)', () => {
      const repeatable = (): RequestClient<Ask, Answer> => echoClient({ timeoutMs: 600_000, repeatable: true });

      it('sends a request lost with the connection once more, under a fresh id, and answers with its reply', async () => {
        await client.close();
        client = repeatable();
        await startResponder();
        const single = client.request({ question: 'lost' });
        const stream = (async () => {
          const seen: string[] = [];
          for await (const answer of client.stream({ question: 'streamed' }, { isLast: (r) => r.end })) seen.push(answer.answer ?? '');
          return seen;
        })();
        await expect.poll(() => received.length).toBe(2);
        bus.dropConnection();
        await turns();
        bus.restoreConnection();

        await expect.poll(() => received.length).toBe(4);
        const [first, second] = [received.slice(0, 2), received.slice(2)];
        expect(second.map(question).sort()).toEqual(['lost', 'streamed']);
        expect(new Set([...first, ...second].map((m) => m.properties.id)).size).toBe(4);
        // A late reply to the first sending is ignored: only the second's answer counts.
        for (const m of first) await reply(m.properties.id, { answer: 'too late', end: true });
        for (const m of second) await reply(m.properties.id, { answer: `re: ${question(m)}`, end: true });
        await expect(single).resolves.toEqual({ answer: 're: lost', end: true });
        await expect(stream).resolves.toEqual(['re: streamed']);
      });

      it('sends once more a request whose acknowledgement the connection lost; a service that may act is not asked twice', async () => {
        await startResponder(async (m) => reply(m.properties.id, { answer: `re: ${question(m)}`, end: true }));
        // The bus takes the first request of each client, and its acknowledgement is lost with the connection.
        const ackLost = (transport: Transport): Transport => {
          let sends = 0;
          return new Proxy(transport, {
            get(target, key) {
              if (key !== 'createProducer') {
                const value: unknown = Reflect.get(target, key, target);
                return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
              }
              return async (topic: string, options?: ProducerOptions): Promise<Producer> => {
                const producer = await target.createProducer(topic, options);
                return {
                  topic: producer.topic,
                  close: () => producer.close(),
                  send: async (message) => {
                    await producer.send(message);
                    if (sends++ === 0) throw new UnacknowledgedSendError(`send on ${topic} failed: the connection was lost before the broker acknowledged it`);
                  },
                };
              };
            },
          });
        };
        const clientOn = (repeatable: boolean): RequestClient<Ask, Answer> => echoClient({ transport: ackLost(bus), timeoutMs: 5000, repeatable });
        const reader = clientOn(true);
        const actor = clientOn(false);
        try {
          await expect(reader.request({ question: 'read' })).resolves.toEqual({ answer: 're: read', end: true });
          expect(received.map(question)).toEqual(['read', 'read']);
          await expect(actor.request({ question: 'act' })).rejects.toBeInstanceOf(UnacknowledgedSendError);
          await expect.poll(() => received.map(question)).toEqual(['read', 'read', 'act']);
        } finally {
          await Promise.all([reader.close(), actor.close()]);
        }
      });

      it('gives up a request lost twice, and a stream whose answer had begun, saying so', async () => {
        await client.close();
        client = repeatable();
        await startResponder();
        const single = failureOf(client.request({ question: 'lost twice' }));
        const seen: string[] = [];
        const stream = streamInto(seen, 'begun');
        await expect.poll(() => received.length).toBe(2);
        const begun = received.find((m) => question(m) === 'begun') as IncomingMessage;
        await reply(begun.properties.id, { answer: 'part', end: false });
        await until(() => seen.length === 1);
        bus.dropConnection();
        await turns();
        bus.restoreConnection();
        await expect.poll(() => received.length).toBe(3);
        expect(question(received[2] as IncomingMessage)).toBe('lost twice');
        bus.dropConnection();
        await turns();
        bus.restoreConnection();

        const error = await single;
        expect(error).toBeInstanceOf(ConnectionLostError);
        expect(String(error)).toMatch(/it was already sent a second time after an earlier loss/);
        const streamError = await stream;
        expect(seen).toEqual(['part']);
        expect(streamError).toBeInstanceOf(ConnectionLostError);
        expect(String(streamError)).toMatch(/next response \(after 1 replies\).*it was not sent again/);
        expect(received).toHaveLength(3);
      });
    });

    it('does not call a wait that runs out while the connection is down a timeout: the request is given up as lost once it is back', async () => {
      await onFakeClock(async (requested) => {
        const waiting = failureOf(client.request({ question: 'cut off' }, { timeoutMs: 1000 }));
        await requested();
        bus.dropConnection();
        await vi.advanceTimersByTimeAsync(1500);
        let settled = false;
        void waiting.then(() => (settled = true));
        await turns();
        // Its reply may have gone with the connection: that says nothing of the service, so it waits on.
        expect(settled).toBe(false);
        bus.restoreConnection();
        const error = await waiting;
        expect(error).toBeInstanceOf(ConnectionLostError);

        // A connection that stays down ends the wait one more period later, as a timeout.
        const abandoned = failureOf(client.request({ question: 'never back' }, { timeoutMs: 1000 }));
        await expect.poll(() => received.length).toBe(2);
        bus.dropConnection();
        await vi.advanceTimersByTimeAsync(2000);
        expect(await abandoned).toBeInstanceOf(RequestTimeoutError);
      });
    });

    it('keeps requests made after the loss, and serves new ones once the connection is back', async () => {
      await startResponder(async (m) => {
        if (question(m) !== 'hold') await reply(m.properties.id, { answer: `re: ${question(m)}`, end: true });
      });
      await client.start();
      bus.dropConnection();
      // Made during the outage: its publish fails (the memory transport refuses sends while down) — not lost.
      await expect(client.request({ question: 'during' })).rejects.not.toBeInstanceOf(ConnectionLostError);
      bus.restoreConnection();
      // Its outcome is awaited at the end, but handled from the start: on a loaded machine it may time out before
      // the next request is answered.
      const held = expect(client.request({ question: 'hold' }, { timeoutMs: 200 })).rejects.toBeInstanceOf(RequestTimeoutError);
      await expect(client.request({ question: 'after' })).resolves.toEqual({ answer: 're: after', end: true });
      // Made in the current epoch: a later reconnect without a loss fails nothing, the timeout still applies.
      await held;
    });
  });
});
