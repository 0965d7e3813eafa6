/**
 * The native transport gates each publish on the links it needs (its own producer and, for a call, its reply
 * subscription), not on all of the transport's: one producer that stays down after a broker is lost (one not
 * used since the start, say) must not hold back publishes on the others. The C++ client is a stand-in whose
 * producers' and consumers' connections the test controls; the broker's port is a plain TCP server, since the
 * transport waits for it to accept a connection before its first producer (the binding itself is exercised
 * against a real broker in test/integration/native-*.test.ts).
 */
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NotConnectedError } from '../../../src/bus/errors.js';
import { NativeTransport } from '../../../src/bus/pulsar/native/native-transport.js';
import type { NativeClient, NativeConsumer, NativeProducer, PulsarClientModule } from '../../../src/bus/pulsar/native/pulsar-client-module.js';

/** A C++ producer or consumer whose connection the test sets; a producer's sends are acknowledged at once. */
class StandInHandler implements NativeProducer, NativeConsumer {
  connected = true;
  closed = false;
  readonly sent: Buffer[] = [];

  constructor(readonly topic: string) {}

  send(message: { data: Buffer }): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('Failed to send message: AlreadyClosed'));
    this.sent.push(message.data);
    return Promise.resolve(undefined);
  }
  acknowledge(): Promise<null> {
    return Promise.resolve(null);
  }
  negativeAcknowledge(): void {}
  unsubscribe(): Promise<null> {
    return Promise.resolve(null);
  }
  close(): Promise<null> {
    this.closed = true;
    return Promise.resolve(null);
  }
  isConnected(): boolean {
    return this.connected && !this.closed;
  }
}

/** The pulsar-client module with stand-in handlers, listed by topic in `handlers`. */
function standInModule(handlers: Map<string, StandInHandler>): PulsarClientModule {
  const made = (topic: string): StandInHandler => {
    const handler = new StandInHandler(topic);
    handlers.set(topic, handler);
    return handler;
  };
  class Client implements NativeClient {
    createProducer(config: { topic: string }): Promise<NativeProducer> {
      return Promise.resolve(made(config.topic));
    }
    subscribe(config: { topic: string }): Promise<NativeConsumer> {
      return Promise.resolve(made(config.topic));
    }
    close(): Promise<null> {
      return Promise.resolve(null);
    }
  }
  return { Client, AuthenticationToken: class {} };
}

const SEND_TIMEOUT_MS = 800;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('native transport: a publish waits for the links it needs, not for all of them', () => {
  let broker: Server;
  let transport: NativeTransport;
  let handlers: Map<string, StandInHandler>;

  beforeEach(async () => {
    broker = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => broker.listen(0, '127.0.0.1', () => resolve()));
    handlers = new Map();
    transport = new NativeTransport(standInModule(handlers), {
      serviceUrl: `pulsar://127.0.0.1:${(broker.address() as AddressInfo).port}`,
      sendTimeoutMs: SEND_TIMEOUT_MS,
      reconnectSettleMs: 0,
    });
  });

  afterEach(async () => {
    await transport.close();
    await new Promise<void>((resolve) => broker.close(() => resolve()));
  });

  /** Takes a handler down as a lost broker does, and lets the transport see it: a new epoch, not connected. */
  async function drop(topic: string): Promise<void> {
    handlers.get(topic)!.connected = false;
    // status() samples again only when its last sample is older than 20 ms.
    await sleep(25);
    expect(transport.status().connected).toBe(false);
  }

  it('sends at once on a connected producer while another producer of the transport stays down', async () => {
    const used = await transport.createProducer('persistent://tg/flow/used');
    await transport.createProducer('persistent://tg/flow/idle');
    await drop('persistent://tg/flow/idle');

    await used.send({ payload: Buffer.from('answer') });

    expect(handlers.get('persistent://tg/flow/used')!.sent.map(String)).toEqual(['answer']);
    expect(transport.status()).toMatchObject({ connected: false, epoch: 1 });
  });

  it('holds a publish on a producer whose reconnect is pending, and fails it as never written after the send timeout', async () => {
    const waiting = await transport.createProducer('persistent://tg/flow/waiting');
    await transport.createProducer('persistent://tg/flow/other');
    await drop('persistent://tg/flow/waiting');

    await expect(waiting.send({ payload: Buffer.from('held') })).rejects.toBeInstanceOf(NotConnectedError);
    expect(handlers.get('persistent://tg/flow/waiting')!.sent).toEqual([]);
  });

  it('sends a held publish once its producer is back, though another producer is still down', async () => {
    const waiting = await transport.createProducer('persistent://tg/flow/waiting');
    await transport.createProducer('persistent://tg/flow/idle');
    await drop('persistent://tg/flow/waiting');
    await drop('persistent://tg/flow/idle');

    const sent = waiting.send({ payload: Buffer.from('held') });
    await sleep(50);
    expect(handlers.get('persistent://tg/flow/waiting')!.sent).toEqual([]);
    handlers.get('persistent://tg/flow/waiting')!.connected = true;

    await sent;
    expect(handlers.get('persistent://tg/flow/waiting')!.sent.map(String)).toEqual(['held']);
    expect(transport.status().connected).toBe(false);
  });

  it("holds a call's request while its reply subscription is down, and sends it once that is back though another producer is not", async () => {
    const replies = await transport.subscribe({ topic: 'non-persistent://tg/response/prompt', subscription: 'rr-1', subscriptionType: 'Exclusive', handler: () => undefined });
    const requests = await transport.createProducer('non-persistent://tg/request/prompt', { replies });
    await transport.createProducer('persistent://tg/flow/idle');
    await drop('non-persistent://tg/response/prompt');
    await drop('persistent://tg/flow/idle');

    const sent = requests.send({ payload: Buffer.from('ask') });
    await sleep(200);
    expect(handlers.get('non-persistent://tg/request/prompt')!.sent).toEqual([]);
    handlers.get('non-persistent://tg/response/prompt')!.connected = true;

    await sent;
    expect(handlers.get('non-persistent://tg/request/prompt')!.sent.map(String)).toEqual(['ask']);
    expect(transport.status().connected).toBe(false);
  });

  it('counts as receiving while only a producer is down, and not while a consumer is', async () => {
    await transport.subscribe({ topic: 'non-persistent://tg/request/agent', subscription: 'agent', subscriptionType: 'Shared', handler: () => undefined });
    await transport.createProducer('persistent://tg/flow/idle');

    await drop('persistent://tg/flow/idle');
    expect(transport.status()).toMatchObject({ connected: false, receiving: true });

    await drop('non-persistent://tg/request/agent');
    expect(transport.status()).toMatchObject({ connected: false, receiving: false });
  });
});
