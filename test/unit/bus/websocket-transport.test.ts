/**
 * The WebSocket transport against a scripted stand-in for the broker's WebSocket service: what the real broker
 * cannot be made to do on demand (refuse an upgrade with 409, drop a connection, stop answering pings).
 * The same transport runs the full contract against the real broker in test/integration.
 */
import { createServer, type IncomingMessage as HttpRequest, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import {
  ConnectError,
  FrameTooLargeError,
  ProducerSendError,
  TransportClosedError,
  TransportError,
} from '../../../src/bus/errors.js';
import { WebSocketTransport, type WebSocketTransportOptions } from '../../../src/bus/pulsar/websocket/websocket-transport.js';
import type { IncomingMessage } from '../../../src/bus/transport.js';
import type { TopicClients } from '../../../src/bus/pulsar/topic-clients.js';

interface Session {
  ws: WebSocket;
  url: string;
  headers: HttpRequest['headers'];
  frames: Array<Record<string, unknown>>;
}

const consumerNameOf = (session: Session): string => new URL(session.url, 'http://x').searchParams.get('consumerName') ?? '';
const producerNameOf = (session: Session): string => new URL(session.url, 'http://x').searchParams.get('producerName') ?? '';

/** A stand-in for the broker: answers upgrades as scripted, acks publishes unless told otherwise. */
class FakeBroker {
  readonly sessions: Session[] = [];
  readonly upgrades: string[] = [];
  /** Return an HTTP status to refuse the upgrade. */
  refuse: (url: string) => number | undefined = () => undefined;
  autoAck = true;
  /**
   * Frames to send in the same TCP write as the upgrade's answer, as the broker does with a subscription's
   * backlog when the client's process is slow to read: they arrive in one read with the 101 response.
   */
  greet: (url: string) => string[] = () => [];
  private readonly http: Server;
  private readonly wss: WebSocketServer;

  constructor(options: { autoPong?: boolean } = {}) {
    this.wss = new WebSocketServer({ noServer: true, autoPong: options.autoPong ?? true });
    this.http = createServer((_req, res) => res.writeHead(404).end());
    this.http.on('upgrade', (req: HttpRequest, socket: Socket, head: Buffer) => {
      const url = req.url ?? '';
      this.upgrades.push(url);
      const status = this.refuse(url);
      if (status !== undefined) {
        // What Jetty sends for the broker: an error page around the client's JSON error.
        const body =
          `<html><body><h2>HTTP ERROR ${status} Failed to create producer/consumer: ` +
          `{&quot;errorMsg&quot;:&quot;scripted refusal ${status}&quot;,&quot;reqId&quot;:1}</h2></body></html>`;
        socket.end(`HTTP/1.1 ${status} Refused\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
        return;
      }
      socket.cork();
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        const session: Session = { ws, url, headers: req.headers, frames: [] };
        this.sessions.push(session);
        for (const frame of this.greet(url)) ws.send(frame);
        socket.uncork();
        ws.on('message', (data) => {
          const frame = JSON.parse(String(data)) as Record<string, unknown>;
          session.frames.push(frame);
          if (this.autoAck && url.startsWith('/ws/v2/producer/')) {
            ws.send(JSON.stringify({ result: 'ok', messageId: 'CAAQAA==', context: frame.context }));
          }
        });
      });
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.http.listen(0, '127.0.0.1', resolve));
    return `ws://127.0.0.1:${(this.http.address() as AddressInfo).port}`;
  }

  /** The open sessions on one endpoint (`producer`, `consumer`). */
  open(endpoint: 'producer' | 'consumer'): Session[] {
    return this.sessions.filter((s) => s.url.startsWith(`/ws/v2/${endpoint}/`) && s.ws.readyState === WebSocket.OPEN);
  }

  last(): Session {
    const session = this.sessions.at(-1);
    if (!session) throw new Error('no session yet');
    return session;
  }

  async close(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }
}

const fast: WebSocketTransportOptions = { reconnect: { initialDelayMs: 10, maxDelayMs: 40 }, connectAttempts: 3 };

describe('WebSocketTransport (against a scripted broker)', () => {
  let broker: FakeBroker;
  let url: string;
  let transport: WebSocketTransport;

  beforeEach(async () => {
    broker = new FakeBroker();
    url = await broker.listen();
    transport = new WebSocketTransport({ ...fast, url, token: 'jwt-123' });
  });

  afterEach(async () => {
    await transport.close();
    await broker.close();
  });

  /** A consumer on persistent://tg/flow/t that records each payload's text in `seen` and acks it. */
  const subscribeAcking = (subscription: string, subscriptionType: 'Shared' | 'Exclusive', seen: string[]) =>
    transport.subscribe({
      topic: 'persistent://tg/flow/t',
      subscription,
      subscriptionType,
      handler: async (m) => {
        seen.push(m.payload.toString());
        await m.ack();
      },
    });

  it('builds producer and consumer URLs with encoded segments, query parameters and the bearer token', async () => {
    await transport.createProducer('non-persistent://tg/request/agent:ws-x:flow-y');
    await transport.subscribe({
      topic: 'persistent://tg/flow/agent:ws-x:flow-y',
      subscription: 'agent-manager--ws-x--flow-y--request',
      subscriptionType: 'Key_Shared',
      receiverQueueSize: 5000,
      handler: () => undefined,
    });
    expect(broker.upgrades).toHaveLength(2);
    expect(broker.upgrades[0]).toMatch(/^\/ws\/v2\/producer\/non-persistent\/tg\/request\/agent%3Aws-x%3Aflow-y\?producerName=tg-agent-[0-9a-f]{12}-1$/);
    expect(broker.upgrades[1]).toMatch(
      new RegExp(
        '^/ws/v2/consumer/persistent/tg/flow/agent%3Aws-x%3Aflow-y/agent-manager--ws-x--flow-y--request' +
          '\\?subscriptionType=Key_Shared&receiverQueueSize=1000&negativeAckRedeliveryDelay=1000&consumerName=tg-agent-[0-9a-f]{12}-1$',
      ),
    );
    expect(broker.sessions.map((s) => s.headers.authorization)).toEqual(['Bearer jwt-123', 'Bearer jwt-123']);
  });

  it('sends base64 payloads with properties and a context, and settles each send by its own ack', async () => {
    broker.autoAck = false;
    const producer = await transport.createProducer('persistent://tg/flow/t');
    const one = producer.send({ payload: Buffer.from('one'), properties: { id: 'a' } });
    const two = producer.send({ payload: Buffer.from('two') });
    await vi.waitFor(() => expect(broker.last().frames).toHaveLength(2));
    const [f1, f2] = broker.last().frames;
    expect(f1).toEqual({ payload: Buffer.from('one').toString('base64'), properties: { id: 'a' }, context: '1' });
    expect(f2).toEqual({ payload: Buffer.from('two').toString('base64'), properties: {}, context: '2' });
    broker.last().ws.send(JSON.stringify({ result: 'send-error:8', errorMsg: 'queue full', context: '2' }));
    broker.last().ws.send(JSON.stringify({ result: 'ok', messageId: 'x', context: '1' }));
    await expect(one).resolves.toBeUndefined();
    await expect(two).rejects.toBeInstanceOf(ProducerSendError);
    await expect(two).rejects.toMatchObject({ sendErrorCode: 8, brokerMessage: 'queue full', retriable: true });
  });

  it('refuses a frame over maxFrameBytes before sending anything', async () => {
    await transport.close();
    transport = new WebSocketTransport({ ...fast, url, maxFrameBytes: 1000 });
    const producer = await transport.createProducer('persistent://tg/flow/t');
    const sending = producer.send({ payload: Buffer.alloc(800) });
    await expect(sending).rejects.toBeInstanceOf(FrameTooLargeError);
    await expect(sending).rejects.toThrow(/over the 1000-byte limit/);
    expect(broker.last().frames).toEqual([]);
    await expect(producer.send({ payload: Buffer.alloc(600) })).resolves.toBeUndefined();
  });

  it('measures a frame exactly, key and non-ASCII properties included, and the broker reads it as JSON', async () => {
    const message = { payload: Buffer.from('ünïcode payload'), properties: { id: 'ß-"quoted"-✓' }, key: 'k-✓' };
    const expected = JSON.stringify({ payload: message.payload.toString('base64'), properties: message.properties, key: message.key, context: '1' });
    const size = Buffer.byteLength(expected, 'utf8');
    await transport.close();
    transport = new WebSocketTransport({ ...fast, url, maxFrameBytes: size });
    const producer = await transport.createProducer('persistent://tg/flow/t');
    await expect(producer.send(message)).resolves.toBeUndefined();
    expect(broker.last().frames).toEqual([JSON.parse(expected)]);
    // The same message one byte over the limit (the next context, "2", is as long as "1").
    await transport.close();
    transport = new WebSocketTransport({ ...fast, url, maxFrameBytes: size - 1 });
    const tight = await transport.createProducer('persistent://tg/flow/t');
    await expect(tight.send(message)).rejects.toMatchObject({ frameBytes: size });
  });

  it('fails at once on a refusal that retrying cannot fix (404)', async () => {
    broker.refuse = () => 404;
    const creating = transport.createProducer('persistent://tg/nope/t');
    await expect(creating).rejects.toBeInstanceOf(ConnectError);
    await expect(creating).rejects.toMatchObject({ status: 404, retriable: false });
    await expect(creating).rejects.toThrow(/\(not retriable\): HTTP 404 Refused: scripted refusal 404$/);
    expect(broker.upgrades).toHaveLength(1);
  });

  it('retries a busy (409) subscription a bounded number of times', async () => {
    let refusals = 2;
    broker.refuse = () => (refusals-- > 0 ? 409 : undefined);
    await transport.subscribe({ topic: 'non-persistent://tg/response/r', subscription: 'rr-1', subscriptionType: 'Exclusive', handler: () => undefined });
    expect(broker.upgrades).toHaveLength(3);

    broker.refuse = () => 409;
    const busy = transport.subscribe({ topic: 'non-persistent://tg/response/r', subscription: 'rr-2', subscriptionType: 'Exclusive', handler: () => undefined });
    await expect(busy).rejects.toMatchObject({ status: 409, retriable: true });
    await expect(busy).rejects.toThrow(/after 3 attempts: HTTP 409/);
  });

  it('reports an unreachable broker after the bounded attempts', async () => {
    await broker.close();
    const creating = transport.createProducer('persistent://tg/flow/t');
    await expect(creating).rejects.toBeInstanceOf(ConnectError);
    await expect(creating).rejects.toThrow(/after 3 attempts: .*ECONNREFUSED/);
    broker = new FakeBroker();
  });

  it('decodes message frames, and acks, nacks, and nacks for a handler that throws', async () => {
    const seen: IncomingMessage[] = [];
    await transport.subscribe({
      topic: 'persistent://tg/flow/t',
      subscription: 's',
      subscriptionType: 'Shared',
      handler: async (m) => {
        seen.push(m);
        const text = m.payload.toString();
        if (text === 'throw') throw new Error('handler failed');
        if (text === 'ack') await m.ack();
        if (text === 'nack') await m.nack();
        await m.ack(); // a second settle is ignored
      },
    });
    const session = broker.last();
    const frame = (id: string, text: string, extra: object = {}): string =>
      JSON.stringify({ messageId: id, payload: Buffer.from(text).toString('base64'), publishTime: 'now', ...extra });
    session.ws.send(frame('m1', 'ack', { properties: { id: 'x' }, redeliveryCount: 2 }));
    session.ws.send(frame('m2', 'nack'));
    session.ws.send(frame('m3', 'throw'));
    session.ws.send(JSON.stringify({ endOfTopic: false }));
    await vi.waitFor(() => expect(session.frames).toHaveLength(3));
    expect(seen[0]).toMatchObject({ messageId: 'm1', topic: 'persistent://tg/flow/t', properties: { id: 'x' }, redeliveryCount: 2 });
    expect(seen[1]).toMatchObject({ properties: {}, redeliveryCount: 0 });
    expect(session.frames).toEqual([
      { messageId: 'm1' },
      { type: 'negativeAcknowledge', messageId: 'm2' },
      { type: 'negativeAcknowledge', messageId: 'm3' },
    ]);
  });

  it('delivers the frames that arrive together with the upgrade answer, on the first connect and after a reconnect', async () => {
    const seen: string[] = [];
    let backlog = ['b1', 'b2', 'b3'];
    broker.greet = () =>
      backlog.splice(0).map((id) => JSON.stringify({ messageId: id, payload: Buffer.from(id).toString('base64') }));
    await subscribeAcking('backlog', 'Shared', seen);
    await vi.waitFor(() => expect(seen).toEqual(['b1', 'b2', 'b3']));
    await vi.waitFor(() => expect(broker.last().frames).toHaveLength(3));

    backlog = ['r1', 'r2'];
    broker.last().ws.terminate();
    await vi.waitFor(() => expect(broker.sessions).toHaveLength(2));
    await vi.waitFor(() => expect(seen).toEqual(['b1', 'b2', 'b3', 'r1', 'r2']));
    await vi.waitFor(() => expect(broker.last().frames).toEqual([{ messageId: 'r1' }, { messageId: 'r2' }]));
  });

  it('re-subscribes under the same name after the connection drops and keeps delivering', async () => {
    const seen: string[] = [];
    const events: { connected: boolean; epoch: number }[] = [];
    transport.onStatus(({ connected, epoch }) => events.push({ connected, epoch }));
    await subscribeAcking('same', 'Exclusive', seen);
    let busy = true;
    broker.refuse = () => (busy ? 409 : undefined);
    broker.last().ws.terminate();
    await vi.waitFor(() => expect(broker.upgrades.length).toBeGreaterThanOrEqual(4), { interval: 5 });
    expect(transport.status()).toEqual({
      connected: false,
      detail: expect.stringMatching(/^consumer same on persistent:\/\/tg\/flow\/t: reconnecting \(attempt \d+, last error: HTTP 409/),
      epoch: 1,
    });
    busy = false;
    await vi.waitFor(() => expect(broker.sessions).toHaveLength(2));
    await vi.waitFor(() => expect(transport.status().connected).toBe(true));
    // Pushed, not polled: the subscription's own connect, the loss (a new epoch), the reconnect.
    expect(events).toEqual([
      { connected: false, epoch: 0 },
      { connected: true, epoch: 0 },
      { connected: false, epoch: 1 },
      { connected: true, epoch: 1 },
    ]);
    // The same subscription each time; each socket under a consumer name of its own.
    expect(new Set(broker.upgrades.map((u) => u.replace(/&consumerName=[^&]*$/, ''))).size).toBe(1);
    broker.last().ws.send(JSON.stringify({ messageId: 'n1', payload: Buffer.from('after').toString('base64') }));
    await vi.waitFor(() => expect(seen).toEqual(['after']));
    // The ack is written after the handler ran; the broker reads it some time later.
    await vi.waitFor(() => expect(broker.last().frames).toEqual([{ messageId: 'n1' }]));
  });

  it('fails unacknowledged sends with a retriable error when the connection drops, then sends again', async () => {
    broker.autoAck = false;
    const producer = await transport.createProducer('persistent://tg/flow/t');
    const inFlight = producer.send({ payload: Buffer.from('lost?') });
    await vi.waitFor(() => expect(broker.last().frames).toHaveLength(1));
    broker.last().ws.terminate();
    const error = await inFlight.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ retriable: true });
    expect(String(error)).toMatch(/may or may not have been published/);
    broker.autoAck = true;
    await expect(producer.send({ payload: Buffer.from('again') })).resolves.toBeUndefined();
    expect(broker.sessions).toHaveLength(2);
  });

  it('fails a send the broker holds unacknowledged past the ack timeout, reopens the socket, and sends on the new one', async () => {
    await transport.close();
    transport = new WebSocketTransport({ ...fast, reconnect: { ...fast.reconnect, settleMs: 20 }, url, ackTimeoutMs: 200 });
    broker.autoAck = false;
    const producer = await transport.createProducer('persistent://tg/flow/t');
    const held = broker.last();
    const error = await producer.send({ payload: Buffer.from('held') }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toMatchObject({ code: 'TG_TRANSPORT_SEND_UNACKNOWLEDGED', retriable: true });
    expect(String(error)).toMatch(/no acknowledgement from the broker within 200 ms/);
    expect(held.frames).toHaveLength(1);
    broker.autoAck = true;
    await vi.waitFor(() => expect(broker.sessions).toHaveLength(2));
    await expect(producer.send({ payload: Buffer.from('after') })).resolves.toBeUndefined();
    expect(broker.last().frames.map((f) => Buffer.from(String(f.payload), 'base64').toString())).toEqual(['after']);
    expect(held.ws.readyState).not.toBe(WebSocket.OPEN);
  });

  it('reopens a consumer whose socket is open while the broker has no consumer of its name, only after a topic may have moved', async () => {
    await transport.close();
    // The broker's view of each subscription: the consumer names of the open consumer sessions, less those whose
    // consumer the WebSocket service lost behind the open socket (it reconnects on a backoff of its own).
    const lostBehindSocket = new Set<string>();
    let readable = true;
    const looks: string[] = [];
    const topicClients = (topic: string): Promise<TopicClients | undefined> => {
      looks.push(topic);
      if (!readable) return Promise.resolve(undefined);
      const subscribed = broker.open('consumer').map(consumerNameOf).filter((name) => !lostBehindSocket.has(name));
      return Promise.resolve({ subscriptions: new Map([['sub', subscribed]]), publishers: broker.open('producer').map(producerNameOf) });
    };
    transport = new WebSocketTransport({
      ...fast,
      reconnect: { ...fast.reconnect, settleMs: 20 },
      url,
      ackTimeoutMs: 150,
      topicClients,
      heal: { windowMs: 5_000, pollMs: 30, graceMs: 30 },
    });
    const seen: string[] = [];
    await subscribeAcking('sub', 'Shared', seen);
    const consumerSessions = (): Session[] => broker.sessions.filter((s) => s.url.startsWith('/ws/v2/consumer/'));
    const first = consumerSessions()[0]!;
    lostBehindSocket.add(consumerNameOf(first));

    // Nothing moved yet: the stats are not read, the socket is left alone.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(looks).toEqual([]);
    expect(consumerSessions()).toHaveLength(1);

    // A send left unacknowledged says a topic may have moved; while the stats cannot be read, nothing is reopened.
    readable = false;
    broker.autoAck = false;
    const producer = await transport.createProducer('persistent://tg/flow/other');
    await expect(producer.send({ payload: Buffer.from('held') })).rejects.toMatchObject({ code: 'TG_TRANSPORT_SEND_UNACKNOWLEDGED' });
    await vi.waitFor(() => expect(looks.length).toBeGreaterThan(2));
    expect(consumerSessions()).toHaveLength(1);

    // Once they can, the consumer the broker does not have is reopened under a new name, and delivers again.
    readable = true;
    await vi.waitFor(() => expect(consumerSessions()).toHaveLength(2));
    const second = consumerSessions()[1]!;
    expect(consumerNameOf(second)).not.toBe(consumerNameOf(first));
    expect(first.ws.readyState).not.toBe(WebSocket.OPEN);
    second.ws.send(JSON.stringify({ messageId: 'bWlkLTE=', payload: Buffer.from('after the heal').toString('base64'), properties: {} }));
    await vi.waitFor(() => expect(seen).toEqual(['after the heal']));
    // Reopened by us, not lost: no new epoch, which would give up the calls waiting on every other subscription.
    expect(transport.status()).toMatchObject({ connected: true, epoch: 0 });

    // One the broker has is left alone.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(consumerSessions()).toHaveLength(2);
  });

  it('judges each topic on its own stats, a topic whose stats do not come holding back no other', async () => {
    await transport.close();
    const lostBehindSocket = new Set<string>();
    const topicClients = (topic: string): Promise<TopicClients | undefined> => {
      // The first topic has no owner yet: its stats never come (the reader's own timeout is longer than the test).
      if (topic.endsWith('/a')) return new Promise(() => undefined);
      const subscribed = broker.open('consumer').map(consumerNameOf).filter((name) => !lostBehindSocket.has(name));
      return Promise.resolve({ subscriptions: new Map([['sub', subscribed]]), publishers: [] });
    };
    transport = new WebSocketTransport({ ...fast, url, topicClients, heal: { windowMs: 5_000, pollMs: 30, graceMs: 30 } });
    for (const topic of ['persistent://tg/flow/a', 'persistent://tg/flow/b']) {
      await transport.subscribe({ topic, subscription: 'sub', subscriptionType: 'Shared', handler: async (m) => m.ack() });
    }
    const onB = (): Session[] => broker.sessions.filter((s) => s.url.includes('/flow/b/'));
    lostBehindSocket.add(consumerNameOf(onB()[0]!));
    // A move signalled: a consumer's link lost (on a topic of its own).
    const other = await transport.subscribe({ topic: 'persistent://tg/flow/c', subscription: 'other', subscriptionType: 'Shared', handler: async (m) => m.ack() });
    expect(other).toBeDefined();
    broker.sessions.find((s) => s.url.includes('/flow/c/'))!.ws.terminate();
    await vi.waitFor(() => expect(onB()).toHaveLength(2));
    expect(consumerNameOf(onB()[1]!)).not.toBe(consumerNameOf(onB()[0]!));
  });

  it('takes a send of its own on a topic it consumes, after which nothing arrives, as a sign of a move', async () => {
    await transport.close();
    // The WebSocket service lost every consumer behind its socket: the broker acknowledges sends, nobody gets them.
    const lostBehindSocket = new Set<string>();
    const topicClients = (): Promise<TopicClients> => {
      const subscribed = broker.open('consumer').map(consumerNameOf).filter((name) => !lostBehindSocket.has(name));
      return Promise.resolve({ subscriptions: new Map([['own', subscribed]]), publishers: broker.open('producer').map(producerNameOf) });
    };
    transport = new WebSocketTransport({ ...fast, url, topicClients, heal: { windowMs: 5_000, pollMs: 30, graceMs: 30, echoMs: 150 } });
    const seen: string[] = [];
    await subscribeAcking('own', 'Shared', seen);
    const consumerSessions = (): Session[] => broker.sessions.filter((s) => s.url.startsWith('/ws/v2/consumer/'));
    const producer = await transport.createProducer('persistent://tg/flow/t');

    // Heard back: no sign of a move, the socket is left alone even though the broker lacks its consumer.
    await producer.send({ payload: Buffer.from('next 1') });
    consumerSessions()[0]!.ws.send(JSON.stringify({ messageId: 'bWlkLTE=', payload: Buffer.from('next 1').toString('base64'), properties: {} }));
    await vi.waitFor(() => expect(seen).toEqual(['next 1']));
    lostBehindSocket.add(consumerNameOf(consumerSessions()[0]!));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(consumerSessions()).toHaveLength(1);

    // Not heard back within the echo time: the consumer the broker lacks is reopened.
    await producer.send({ payload: Buffer.from('next 2') });
    await vi.waitFor(() => expect(consumerSessions()).toHaveLength(2));
    expect(consumerNameOf(consumerSessions()[1]!)).not.toBe(consumerNameOf(consumerSessions()[0]!));
  });

  it('reopens a producer whose socket is open while the broker has no producer of its name, failing the send held on it, and sends on the new one', async () => {
    await transport.close();
    // The broker's publishers: the producer names of the open producer sessions, less those whose producer the
    // WebSocket service lost behind the open socket (it reconnects on a backoff of its own, holding what was sent).
    const lostBehindSocket = new Set<string>();
    const topicClients = (): Promise<TopicClients> =>
      Promise.resolve({ subscriptions: new Map(), publishers: broker.open('producer').map(producerNameOf).filter((name) => !lostBehindSocket.has(name)) });
    // An ack timeout longer than the test: only the heal can reopen the socket here.
    transport = new WebSocketTransport({ ...fast, reconnect: { ...fast.reconnect, settleMs: 20 }, url, ackTimeoutMs: 60_000, topicClients, heal: { windowMs: 5_000, pollMs: 30, graceMs: 30 } });
    const producer = await transport.createProducer('persistent://tg/flow/t');
    const first = broker.last();
    expect(producerNameOf(first)).toMatch(/^tg-agent-[0-9a-f]{12}-1$/);
    await expect(producer.send({ payload: Buffer.from('before') })).resolves.toBeUndefined();

    // The topic moves: the service's producer is gone, our socket stays open, and a send waits unacknowledged.
    lostBehindSocket.add(producerNameOf(first));
    broker.autoAck = false;
    const error = await producer.send({ payload: Buffer.from('held') }).then(
      () => undefined,
      (err: unknown) => err,
    );
    // Failed as maybe published (the publish policy decides whether to send it again), by the heal, not the ack timeout.
    expect(error).toMatchObject({ code: 'TG_TRANSPORT_SEND_UNACKNOWLEDGED', retriable: true });
    expect(String(error)).toMatch(new RegExp(`the broker has no producer ${producerNameOf(first)} on persistent://tg/flow/t while its socket is open`));
    broker.autoAck = true;
    await vi.waitFor(() => expect(broker.open('producer').filter((s) => s !== first)).toHaveLength(1));
    const second = broker.open('producer').find((s) => s !== first)!;
    expect(first.ws.readyState).not.toBe(WebSocket.OPEN);
    expect(producerNameOf(second)).not.toBe(producerNameOf(first));
    await expect(producer.send({ payload: Buffer.from('after') })).resolves.toBeUndefined();
    expect(second.frames.map((f) => Buffer.from(String(f.payload), 'base64').toString())).toEqual(['after']);
    // A producer's socket carries no replies: its reopening begins no new epoch, which would give up every call.
    expect(transport.status()).toMatchObject({ connected: true, epoch: 0 });

    // An idle producer the broker lacks is left to the service's own reconnect (the watch still runs): reopening
    // each idle one too would queue their creations at the service ahead of those that are needed.
    lostBehindSocket.add(producerNameOf(second));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(broker.sessions.filter((s) => s.url.startsWith('/ws/v2/producer/'))).toHaveLength(2);
    lostBehindSocket.delete(producerNameOf(second));

    // A producer the broker has is left alone, even with a send waiting on it.
    broker.autoAck = false;
    const waiting = producer.send({ payload: Buffer.from('slow') });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(broker.sessions.filter((s) => s.url.startsWith('/ws/v2/producer/'))).toHaveLength(2);
    second.ws.send(JSON.stringify({ result: 'ok', messageId: 'CAAQAA==', context: second.frames.at(-1)!.context }));
    await expect(waiting).resolves.toBeUndefined();
  });

  it('checks a producer idle through a move before its next send, and reopens it first when the broker lacks it', async () => {
    await transport.close();
    const lostBehindSocket = new Set<string>();
    const looks: string[] = [];
    const topicClients = (topic: string): Promise<TopicClients> => {
      looks.push(topic);
      return Promise.resolve({ subscriptions: new Map(), publishers: broker.open('producer').map(producerNameOf).filter((name) => !lostBehindSocket.has(name)) });
    };
    // An ack timeout longer than the test: a send held on a socket with no producer behind it would not fail here.
    transport = new WebSocketTransport({ ...fast, reconnect: { ...fast.reconnect, settleMs: 20 }, url, ackTimeoutMs: 60_000, topicClients, heal: { windowMs: 5_000, pollMs: 5_000, graceMs: 30 } });
    const tool = await transport.createProducer('persistent://tg/flow/mcp-tool');
    const toolSocket = broker.last();
    const prompt = await transport.createProducer('persistent://tg/flow/prompt');
    const promptSocket = broker.last();
    await transport.subscribe({ topic: 'persistent://tg/flow/t', subscription: 'sub', subscriptionType: 'Shared', handler: async (m) => m.ack() });
    await new Promise((resolve) => setTimeout(resolve, 60));

    // Nothing moved: a send goes at once, with no stats read.
    await tool.send({ payload: Buffer.from('before') });
    expect(looks).toEqual([]);

    // A broker lost: its consumer's socket drops (a sign of a move), and the service lost the tool's producer behind
    // its open socket while it was idle.
    lostBehindSocket.add(producerNameOf(toolSocket));
    broker.open('consumer')[0]!.ws.terminate();
    await vi.waitFor(() => expect(broker.open('consumer')).toHaveLength(1));
    await new Promise((resolve) => setTimeout(resolve, 60));

    // The next send is written on a new socket, never on the one the broker has no producer behind, and succeeds.
    await expect(tool.send({ payload: Buffer.from('after the move') })).resolves.toBeUndefined();
    expect(looks).toEqual(['persistent://tg/flow/mcp-tool']);
    expect(toolSocket.ws.readyState).not.toBe(WebSocket.OPEN);
    expect(toolSocket.frames.map((f) => Buffer.from(String(f.payload), 'base64').toString())).toEqual(['before']);
    const reopened = broker.open('producer').find((s) => s.url.includes('mcp-tool'))!;
    expect(producerNameOf(reopened)).not.toBe(producerNameOf(toolSocket));
    expect(reopened.frames.map((f) => Buffer.from(String(f.payload), 'base64').toString())).toEqual(['after the move']);

    // A producer the broker has is checked once and sends on its socket; its later sends are not checked again.
    await Promise.all([prompt.send({ payload: Buffer.from('p1') }), prompt.send({ payload: Buffer.from('p2') })]);
    await prompt.send({ payload: Buffer.from('p3') });
    expect(looks).toEqual(['persistent://tg/flow/mcp-tool', 'persistent://tg/flow/prompt']);
    expect(promptSocket.ws.readyState).toBe(WebSocket.OPEN);
    expect(promptSocket.frames.map((f) => Buffer.from(String(f.payload), 'base64').toString())).toEqual(['p1', 'p2', 'p3']);
  });

  it('holds a send while its reply subscription is down, and fails it as never written after the send timeout; a link it does not need holds nothing', async () => {
    await transport.close();
    // With a subscriber check (the broker's admin API), which stands in for the other side's return.
    const subscribers = { waitFor: () => Promise.resolve() };
    transport = new WebSocketTransport({ ...fast, reconnect: { ...fast.reconnect, settleMs: 50 }, url, sendTimeoutMs: 200, subscribers });
    const replies = await subscribeAcking('replies', 'Exclusive', []);
    const repliesSession = broker.last();
    const call = await transport.createProducer('persistent://tg/flow/call', { replies });
    const callSession = broker.last();
    const other = await transport.subscribe({ topic: 'persistent://tg/flow/elsewhere', subscription: 'other', subscriptionType: 'Exclusive', handler: async (m) => m.ack() });
    const otherSession = broker.last();
    const answer = await transport.createProducer('persistent://tg/flow/answer');
    const answerSession = broker.last();
    expect(other).toBeDefined();

    // Both consumers' links drop and cannot come back yet; the producers' own links stay open.
    let away = true;
    broker.refuse = (u) => (away && u.startsWith('/ws/v2/consumer/') ? 503 : undefined);
    repliesSession.ws.terminate();
    otherSession.ws.terminate();
    // Each lost link begins an epoch.
    await vi.waitFor(() => expect(transport.status()).toMatchObject({ connected: false, epoch: 2 }));

    // A call waits for the subscription its replies come back on, and fails as never written.
    const error = await call.send({ payload: Buffer.from('too early') }).then(() => undefined, (err: unknown) => err);
    expect(error).toMatchObject({ code: 'TG_TRANSPORT_NOT_CONNECTED', retriable: true });
    expect(String(error)).toMatch(/reconnecting: consumer replies on persistent:\/\/tg\/flow\/t/);
    expect(callSession.frames).toEqual([]);
    // A publish that needs neither consumer goes out while they are away.
    await expect(answer.send({ payload: Buffer.from('answer') })).resolves.toBeUndefined();
    expect(answerSession.frames).toHaveLength(1);

    away = false;
    await vi.waitFor(() => expect(transport.status().connected).toBe(true));
    await expect(call.send({ payload: Buffer.from('now') })).resolves.toBeUndefined();
    expect(callSession.frames).toHaveLength(1);
  });

  it('without a subscriber check, holds a send while any link of the transport is down', async () => {
    await transport.close();
    transport = new WebSocketTransport({ ...fast, reconnect: { ...fast.reconnect, settleMs: 50 }, url, sendTimeoutMs: 200 });
    const producer = await transport.createProducer('persistent://tg/flow/out');
    const producerSession = broker.last();
    await subscribeAcking('other', 'Exclusive', []);
    let away = true;
    broker.refuse = (u) => (away && u.startsWith('/ws/v2/consumer/') ? 503 : undefined);
    broker.last().ws.terminate();
    await vi.waitFor(() => expect(transport.status()).toMatchObject({ connected: false, epoch: 1 }));

    await expect(producer.send({ payload: Buffer.from('too early') })).rejects.toMatchObject({ code: 'TG_TRANSPORT_NOT_CONNECTED', retriable: true });
    expect(producerSession.frames).toEqual([]);

    away = false;
    await vi.waitFor(() => expect(transport.status().connected).toBe(true));
    await expect(producer.send({ payload: Buffer.from('now') })).resolves.toBeUndefined();
    expect(producerSession.frames).toHaveLength(1);
  });

  it('drops and replaces a connection whose pings go unanswered', async () => {
    await transport.close();
    await broker.close();
    broker = new FakeBroker({ autoPong: false });
    url = await broker.listen();
    transport = new WebSocketTransport({ ...fast, url, pingIntervalMs: 20 });
    await transport.createProducer('persistent://tg/flow/t');
    await vi.waitFor(() => expect(broker.sessions.length).toBeGreaterThanOrEqual(2), { timeout: 2000 });
  });

  it('sends unsubscribe before closing when asked, and stops reconnecting once closed', async () => {
    const consumer = await transport.subscribe({ topic: 'persistent://tg/flow/t', subscription: 's', subscriptionType: 'Shared', handler: () => undefined });
    const session = broker.last();
    await consumer.close({ unsubscribe: true });
    await vi.waitFor(() => expect(session.frames).toEqual([{ type: 'unsubscribe' }]));

    const producer = await transport.createProducer('persistent://tg/flow/t');
    await transport.close();
    expect(transport.status()).toEqual({ connected: false, detail: 'websocket transport closed', epoch: 0 });
    await expect(producer.send({ payload: Buffer.from('x') })).rejects.toBeInstanceOf(TransportClosedError);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(broker.sessions).toHaveLength(2);
    await expect(transport.createProducer('persistent://tg/flow/t')).rejects.toBeInstanceOf(TransportClosedError);
  });

  it('checks its options and topic names before connecting', () => {
    expect(() => new WebSocketTransport({ url: 'http://x' })).toThrow(/ws:\/\/ or wss:\/\//);
    expect(() => new WebSocketTransport({ pingIntervalMs: 0 })).toThrow(/pingIntervalMs must be/);
    expect(() => new WebSocketTransport({ reconnect: { initialDelayMs: 500, maxDelayMs: 100 } })).toThrow(/maxDelayMs/);
    return expect(transport.createProducer('tg/flow/t')).rejects.toThrow(/not a full Pulsar topic name/);
  });
});
