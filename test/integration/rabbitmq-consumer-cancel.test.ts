/**
 * A RabbitMQ subscription whose consumer the broker cancels while the connection stands (its queue deleted, as
 * an operator may, or restarted by the broker): the transport consumes again at once, and what is published
 * afterwards is delivered. Against the run's real RabbitMQ (test/support/global-brokers.ts).
 */
import amqplib from 'amqplib';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { RabbitMqTransport } from '../../src/bus/rabbitmq/rabbitmq-transport.js';
import type { Transport } from '../../src/bus/transport.js';

const rabbitmqUrl = inject('rabbitmqUrl');

describe.skipIf(!rabbitmqUrl)('a RabbitMQ consumer cancelled by the broker', () => {
  let transport: Transport | undefined;

  afterEach(async () => {
    await transport?.close();
  });

  it('is consumed again on the same connection, and hears what is published after', async () => {
    transport = new RabbitMqTransport({ url: rabbitmqUrl! });
    const topic = `persistent://tg/flow/cancel-test-${Date.now()}`;
    const queue = `tg.flow.${topic.split('/').at(-1)}.cancelled`;
    const received: string[] = [];
    await transport.subscribe({
      topic,
      subscription: 'cancelled',
      subscriptionType: 'Shared',
      handler: async (message) => {
        received.push(message.payload.toString());
        await message.ack();
      },
    });
    const producer = await transport.createProducer(topic);
    const epoch = transport.status().epoch;

    const admin = await amqplib.connect(rabbitmqUrl!);
    try {
      await (await admin.createChannel()).deleteQueue(queue);
    } finally {
      await admin.close();
    }
    // Published until one arrives: a message sent before the queue is declared and bound again goes nowhere.
    await vi.waitFor(
      async () => {
        await producer.send({ payload: Buffer.from('after the cancel') });
        expect(received.length).toBeGreaterThan(0);
      },
      { timeout: 10_000, interval: 200 },
    );
    expect(new Set(received)).toEqual(new Set(['after the cancel']));
    // No reconnect was needed.
    expect(transport.status()).toMatchObject({ connected: true, epoch });
  });
});
