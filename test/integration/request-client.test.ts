/**
 * The request client over the WebSocket transport against the real broker, with a stand-in service that
 * speaks TrustGraph's pattern: Shared subscription on a non-persistent request topic, replies on a
 * non-persistent response topic carrying the request's `id` property.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RequestTimeoutError } from '../../src/bus/errors.js';
import { RequestClient } from '../../src/bus/request-client.js';
import type { IncomingMessage, Producer } from '../../src/bus/transport.js';
import { WebSocketTransport } from '../../src/bus/pulsar/websocket/websocket-transport.js';
import { explained, subscriptionStats, untilSubscriptionHasPermits } from '../support/failure-report.js';
import { brokerUrls, uniqueName } from '../support/transport-contract.js';
import { jsonCodec } from '../support/json-codec.js';

interface Ask {
  question: string;
  chunks: number | null;
}
interface Answer {
  answer: string | null;
  end_of_stream: boolean;
}

const { webSocketUrl, webServiceUrl } = brokerUrls();
const RESPONDER = 'stand-in--default--default--request';
const logger = pino({ level: process.env.LOG_LEVEL ?? 'silent' });

describe('RequestClient on the real broker (websocket transport)', () => {
  let transport: WebSocketTransport;
  let requestTopic: string;
  let responseTopic: string;
  let client: RequestClient<Ask, Answer>;
  let requests: IncomingMessage[];
  let replies: Producer;

  /** The stand-in service. `onRequest` decides how to answer (default: not at all). */
  async function startResponder(onRequest: (m: IncomingMessage, ask: Ask) => Promise<void> = async () => undefined): Promise<void> {
    replies = await transport.createProducer(responseTopic);
    await transport.subscribe({
      topic: requestTopic,
      subscription: RESPONDER,
      subscriptionType: 'Shared',
      handler: async (m) => {
        requests.push(m);
        await m.ack();
        await onRequest(m, JSON.parse(m.payload.toString()) as Ask);
      },
    });
    // The topics are non-persistent: a request sent before the broker has the responder's permits is dropped.
    await untilSubscriptionHasPermits(webServiceUrl, requestTopic, RESPONDER);
  }

  const reply = (id: string | undefined, answer: Answer): Promise<void> =>
    replies.send({ payload: Buffer.from(JSON.stringify(answer)), properties: id === undefined ? {} : { id } });

  beforeEach(async () => {
    transport = new WebSocketTransport({ url: webSocketUrl, logger, reconnect: { initialDelayMs: 100, maxDelayMs: 1000 } });
    const name = uniqueName('rc');
    requestTopic = `non-persistent://tg/request/${name}:default:default`;
    responseTopic = `non-persistent://tg/response/${name}:default:default`;
    requests = [];
    client = new RequestClient<Ask, Answer>({
      transport,
      requestTopic,
      responseTopic,
      requestCodec: jsonCodec<Ask>('Ask'),
      responseCodec: jsonCodec<Answer>('Answer'),
      timeoutMs: 10_000,
      logger,
    });
    await client.start();
    await untilSubscriptionHasPermits(webServiceUrl, responseTopic, client.subscriptionName);
  });

  afterEach(async () => {
    await client.close();
    await transport.close();
  });

  it('gives two concurrent requests answered in reverse order each their own reply', async () => {
    await startResponder();
    const first = client.request({ question: 'first', chunks: null });
    const second = client.request({ question: 'second', chunks: null });
    await expect.poll(() => requests.length, { timeout: 10_000 }).toBe(2);
    expect(requests[0]?.properties.id).not.toBe(requests[1]?.properties.id);
    for (const m of [...requests].reverse()) {
      const ask = JSON.parse(m.payload.toString()) as Ask;
      await reply(m.properties.id, { answer: `re: ${ask.question}`, end_of_stream: true });
    }
    await expect(first).resolves.toEqual({ answer: 're: first', end_of_stream: true });
    await expect(second).resolves.toEqual({ answer: 're: second', end_of_stream: true });
  });

  it('streams a reply of three messages ending on the end flag', async () => {
    await startResponder(async (m, ask) => {
      for (let i = 1; i <= (ask.chunks ?? 1); i++) {
        await reply(m.properties.id, { answer: `chunk ${i}`, end_of_stream: i === ask.chunks });
      }
    });
    const answers: Array<string | null> = [];
    for await (const res of client.stream({ question: 'tell me', chunks: 3 }, { isLast: (r) => r.end_of_stream })) {
      answers.push(res.answer);
    }
    expect(answers).toEqual(['chunk 1', 'chunk 2', 'chunk 3']);
  });

  it('times out when the service never answers', async () => {
    await startResponder();
    const started = Date.now();
    const pending = client.request({ question: 'anyone?', chunks: null }, { timeoutMs: 1500 });
    await expect(pending).rejects.toBeInstanceOf(RequestTimeoutError);
    await expect(pending).rejects.toThrow(`on ${requestTopic} within 1500 ms`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    expect(requests).toHaveLength(1);
  });

  it('ignores a reply with an unknown id and resolves with its own', async () => {
    await startResponder(async (m) => {
      await reply('00000000-0000-4000-8000-000000000000', { answer: 'for someone else', end_of_stream: true });
      await reply(undefined, { answer: 'no id at all', end_of_stream: true });
      await reply(m.properties.id, { answer: 'mine', end_of_stream: true });
    });
    await explained(
      () => expect(client.request({ question: 'q', chunks: null })).resolves.toEqual({ answer: 'mine', end_of_stream: true }),
      async () => ({
        'requests the responder took': [String(requests.length)],
        'request topic': await subscriptionStats(webServiceUrl, requestTopic),
        'response topic': await subscriptionStats(webServiceUrl, responseTopic),
      }),
    );
  });
});
