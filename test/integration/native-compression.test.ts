/**
 * The native transport's producers compress with LZ4. Fewer bytes keep a busy reader's connection writable, and
 * a Pulsar broker drops a non-persistent message for a consumer whose connection is not writable
 * (docs/benchmarks.md, Scale-out). Consumers of every Pulsar client decompress on their own, so nothing else
 * on the bus changes. The broker's admin API shows how a stored message was compressed; the test reads it there.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transport } from '../../src/bus/transport.js';
import { Inbox, brokerUrls, uniqueName } from '../support/transport-contract.js';
import { createTestTransport, testTransports } from '../support/transports.js';

describe.runIf(testTransports().includes('native'))('the native transport as a producer', () => {
  let transport: Transport;
  const { webServiceUrl, webSocketUrl, serviceUrl } = brokerUrls();

  beforeAll(async () => {
    transport = createTestTransport('native', { webSocketUrl, serviceUrl, logger: pino({ level: 'silent' }) });
  });
  afterAll(async () => {
    await transport?.close();
  });

  it('compresses what it publishes with LZ4, and a consumer receives the text as sent', async () => {
    const name = uniqueName('compressed');
    const topic = `persistent://public/default/${name}`;
    const admin = `${webServiceUrl}/admin/v2/persistent/public/default/${name}`;
    // A subscription keeps the message stored for the admin API to examine.
    const created = await fetch(`${admin}/subscription/kept`, { method: 'PUT' });
    expect(created.status, await created.text()).toBe(204);

    const text = JSON.stringify({ response: 'the same words again and again '.repeat(40) });
    const producer = await transport.createProducer(topic);
    await producer.send({ payload: Buffer.from(text), properties: { id: 'compressed-1' } });
    await producer.close();

    const examined = await fetch(`${admin}/examinemessage?initialPosition=earliest&messagePosition=1`);
    expect(examined.status).toBe(200);
    expect(examined.headers.get('x-pulsar-compression')).toBe('LZ4');
    expect(Number(examined.headers.get('x-pulsar-uncompressed-size'))).toBe(Buffer.byteLength(text));
    expect(JSON.parse(examined.headers.get('x-pulsar-property') ?? '{}')).toEqual({ id: 'compressed-1' });
    await examined.arrayBuffer(); // drain the body so the connection is released

    const inbox = new Inbox((m) => m.ack());
    const consumer = await transport.subscribe({ topic, subscription: 'kept', subscriptionType: 'Exclusive', handler: inbox.handler });
    try {
      await inbox.waitFor(1, 10_000);
      expect(inbox.texts()).toEqual([text]);
    } finally {
      await consumer.close({ unsubscribe: true });
    }
  });
});
