/**
 * The C++ producer holds at most MAX_PENDING_SENDS sends without a receipt and fails any send beyond that at once
 * (`ProducerQueueIsFull`); the native transport's producer hands it no more than that and lets the others wait for
 * room (src/bus/pulsar/native/producer.ts). A burst of three times as many concurrent sends on one producer all
 * arrive, each once.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PENDING_SENDS } from '../../src/bus/pulsar/native/native-transport.js';
import type { Transport } from '../../src/bus/transport.js';
import { Inbox, brokerUrls, uniqueName } from '../support/transport-contract.js';
import { createTestTransport, testTransports } from '../support/transports.js';

const BURST = 3 * MAX_PENDING_SENDS;

describe.runIf(testTransports().includes('native'))('the native transport under a burst of sends on one producer', () => {
  let transport: Transport;
  const { webSocketUrl, serviceUrl } = brokerUrls();

  beforeAll(async () => {
    transport = createTestTransport('native', { webSocketUrl, serviceUrl, logger: pino({ level: 'silent' }) });
  });
  afterAll(async () => {
    await transport?.close();
  });

  it(`publishes ${BURST} concurrent sends, more than the C++ producer holds at once, each exactly once`, async () => {
    const topic = `persistent://public/default/${uniqueName('burst')}`;
    const inbox = new Inbox((m) => m.ack());
    const consumer = await transport.subscribe({ topic, subscription: 'all', subscriptionType: 'Exclusive', handler: inbox.handler });
    const producer = await transport.createProducer(topic);
    try {
      const ids = Array.from({ length: BURST }, (_, i) => `m${i}`);
      const sent = await Promise.allSettled(ids.map((id) => producer.send({ payload: Buffer.from(id), properties: { id } })));
      expect(sent.filter((s) => s.status === 'rejected')).toEqual([]);

      // One producer to one consumer keeps the order: once this one is in, every earlier one is too.
      await producer.send({ payload: Buffer.from('last'), properties: { id: 'last' } });
      const received = (await inbox.waitFor(BURST + 1, 60_000)).map((m) => m.properties.id);

      expect(received.at(-1)).toBe('last');
      expect(received.length).toBe(BURST + 1);
      expect(new Set(received.slice(0, -1))).toEqual(new Set(ids));
    } finally {
      await producer.close();
      await consumer.close({ unsubscribe: true });
    }
  });
});
