/**
 * Smoke test of the test broker itself, using `ws` directly (no project code): a message with properties
 * goes through Pulsar's WebSocket API on a TrustGraph-style topic whose name contains colons.
 */
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { afterEach, describe, expect, inject, it } from 'vitest';

interface ProducerAck {
  result: string;
  messageId?: string;
  context?: string;
  errorMsg?: string;
}

interface ConsumerMessage {
  messageId: string;
  payload: string;
  properties: Record<string, string>;
  publishTime: string;
  redeliveryCount: number;
}

const wsBase = inject('pulsarWebSocketUrl');
const webBase = inject('pulsarWebServiceUrl');
const sockets: WebSocket[] = [];

afterEach(() => {
  for (const socket of sockets.splice(0)) socket.terminate();
});

/** `non-persistent://tg/request/<local>` → `non-persistent/tg/request/<local URL-encoded>`. */
function topicPath(domain: string, tenant: string, namespace: string, local: string): string {
  return `${domain}/${tenant}/${namespace}/${encodeURIComponent(local)}`;
}

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    sockets.push(socket);
    socket.once('open', () => resolve(socket));
    socket.once('error', reject);
    socket.once('unexpected-response', (_request, response) => {
      reject(new Error(`WebSocket upgrade to ${url} answered HTTP ${response.statusCode}`));
    });
  });
}

function nextMessage<T>(socket: WebSocket, timeoutMs = 10_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no frame within ${timeoutMs} ms`)), timeoutMs);
    socket.once('message', (data: WebSocket.RawData) => {
      clearTimeout(timer);
      resolve(JSON.parse(data.toString()) as T);
    });
  });
}

describe('test broker (Pulsar WebSocket API)', () => {
  it('round-trips payload and properties on a non-persistent topic whose name contains colons', async () => {
    const local = `smoke-${randomUUID()}:default:default`;
    const path = topicPath('non-persistent', 'tg', 'request', local);
    const subscription = `smoke-sub:${randomUUID()}`;

    // Subscribe first: non-persistent topics drop messages that have no subscriber.
    const consumer = await open(
      `${wsBase}/ws/v2/consumer/${path}/${encodeURIComponent(subscription)}?subscriptionType=Shared`,
    );
    const producer = await open(`${wsBase}/ws/v2/producer/${path}`);

    // The broker decoded the name: the topic exists under its real, colon-bearing name.
    const topicsResponse = await fetch(`${webBase}/admin/v2/non-persistent/tg/request`);
    expect(topicsResponse.status).toBe(200);
    expect((await topicsResponse.json()) as string[]).toContain(`non-persistent://tg/request/${local}`);

    const body = JSON.stringify({ id: 'abc', question: 'héllo wörld ✓' });
    const properties = { id: 'request-1', 'trace:key': 'a:b:c', empty: '' };
    const received = nextMessage<ConsumerMessage>(consumer);
    const acked = nextMessage<ProducerAck>(producer);
    producer.send(
      JSON.stringify({ payload: Buffer.from(body, 'utf8').toString('base64'), properties, context: 'ctx-1' }),
    );

    const ack = await acked;
    expect(ack).toMatchObject({ result: 'ok', context: 'ctx-1' });
    expect(typeof ack.messageId).toBe('string');

    const message = await received;
    expect(Buffer.from(message.payload, 'base64').toString('utf8')).toBe(body);
    expect(message.properties).toEqual(properties);
    expect(message.redeliveryCount).toBe(0);
    expect(Number.isNaN(Date.parse(message.publishTime))).toBe(false);

    // Acks get no reply; a closed socket would surface as an error on send.
    await new Promise<void>((resolve, reject) =>
      consumer.send(JSON.stringify({ messageId: message.messageId }), (error) => (error ? reject(error) : resolve())),
    );
  });

  it('answers an upgrade for a topic in a missing tenant with an HTTP error, not an open socket', async () => {
    const path = topicPath('non-persistent', `no-such-tenant-${randomUUID().slice(0, 8)}`, 'ns', 'topic');
    await expect(open(`${wsBase}/ws/v2/producer/${path}`)).rejects.toThrow(/HTTP 404/);
  });
});
