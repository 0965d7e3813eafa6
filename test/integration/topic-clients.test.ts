/**
 * The clients a topic has, by name, from the real broker's admin stats (src/bus/pulsar/topic-clients.ts), as the
 * WebSocket socket heal reads them: a topic the broker has not loaded has no clients (after a move that is how
 * the WebSocket service's clients that are not back yet show), and an admin URL that is not a broker's tells
 * nothing.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { topicClientsReader } from '../../src/bus/pulsar/topic-clients.js';
import { WebSocketTransport } from '../../src/bus/pulsar/websocket/websocket-transport.js';
import type { Transport } from '../../src/bus/transport.js';
import { brokerUrls, uniqueName } from '../support/transport-contract.js';

const { webSocketUrl, webServiceUrl } = brokerUrls();

describe('the clients of a topic from the broker admin API', () => {
  let transport: Transport | undefined;
  let server: Server | undefined;
  afterEach(async () => {
    await transport?.close();
    transport = undefined;
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  it('says a topic nobody is attached to has no clients, and lists them once a consumer and a producer are', async () => {
    const topic = `non-persistent://public/default/${uniqueName('clients')}`;
    const read = topicClientsReader({ adminUrl: webServiceUrl });
    const before = await read(topic);
    expect(before).toBeDefined();
    expect(before!.publishers).toEqual([]);
    expect([...before!.subscriptions.keys()]).toEqual([]);

    transport = new WebSocketTransport({ url: webSocketUrl, logger: pino({ level: 'silent' }) });
    await transport.subscribe({ topic, subscription: 'gateway', subscriptionType: 'Exclusive', handler: () => undefined });
    const producer = await transport.createProducer(topic);
    await producer.send({ payload: Buffer.from('{}') });
    const after = await read(topic);
    expect(after?.publishers).toHaveLength(1);
    expect(after?.subscriptions.get('gateway')).toHaveLength(1);
  });

  it('tells nothing when the admin URL answers 404 without the broker\'s reason (not a broker\'s admin API)', async () => {
    server = createServer((_request, response) => response.writeHead(404, { 'content-type': 'text/html' }).end('<html>Not Found</html>'));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const read = topicClientsReader({ adminUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
    expect(await read(`non-persistent://public/default/${uniqueName('clients-elsewhere')}`)).toBeUndefined();
  });
});
