import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { NotConnectedError, TransportError, UnacknowledgedSendError } from '../../../src/bus/errors.js';
import { MemoryTransport } from '../../../src/bus/memory/memory-transport.js';
import type { OutgoingMessage, Producer } from '../../../src/bus/transport.js';
import { PublishPolicy, RESENT_PROPERTY, type ResendMode } from '../../../src/flow/publish-policy.js';

/** A producer whose first sends fail with the given errors, then succeed; it keeps what each send was given. */
function failingThen(errors: Error[]): Producer & { sent: OutgoingMessage[] } {
  const sent: OutgoingMessage[] = [];
  return {
    topic: 'non-persistent://tg/request/agent:default',
    sent,
    send: async (message) => {
      sent.push(message);
      const error = errors.shift();
      if (error) throw error;
    },
    close: async () => {},
  };
}

async function publishWith(mode: ResendMode, errors: Error[]): Promise<{ sent: OutgoingMessage[]; outcome: unknown }> {
  const bus = new MemoryTransport();
  const policy = new PublishPolicy(bus, 10_000, pino({ level: 'silent' }));
  const producer = failingThen(errors);
  const outcome = await policy.publish(producer, { payload: Buffer.from('{}'), properties: { id: 'c1' } }, mode).then(
    () => 'published',
    (error: unknown) => error,
  );
  await bus.close();
  return { sent: producer.sent, outcome };
}

const unconfirmed = (): Error => new UnacknowledgedSendError('send on … failed: the broker did not confirm it (channel closed)');
const notConnected = (): Error => new NotConnectedError('producer for … is not connected');

describe('which failed publishes are sent again', () => {
  it('marks a message sent again after a send the broker did not confirm, in the marked mode', async () => {
    const { sent, outcome } = await publishWith('marked', [notConnected(), unconfirmed()]);
    expect(outcome).toBe('published');
    expect(sent.map((m) => m.properties?.[RESENT_PROPERTY])).toEqual([undefined, undefined, 'true']);
    expect(sent.every((m) => m.properties?.id === 'c1')).toBe(true);
  });

  it('sends again only what was never written in the unsent mode', async () => {
    expect((await publishWith('unsent', [notConnected()])).outcome).toBe('published');
    const { sent, outcome } = await publishWith('unsent', [unconfirmed()]);
    expect(outcome).toBeInstanceOf(UnacknowledgedSendError);
    expect(sent).toHaveLength(1);
  });

  it('sends again, unmarked, whatever the broker may take in the always mode, and never what it refused for good', async () => {
    const { sent, outcome } = await publishWith('always', [unconfirmed()]);
    expect(outcome).toBe('published');
    expect(sent.map((m) => m.properties?.[RESENT_PROPERTY])).toEqual([undefined, undefined]);
    const refused = await publishWith('marked', [new TransportError('too large', { retriable: false })]);
    expect(refused.sent).toHaveLength(1);
    expect(refused.outcome).toBeInstanceOf(TransportError);
  });
});
