/**
 * A producer whose sends are checked before they go out, the same way on every transport that has no producer
 * object of its own per topic (Kafka, RabbitMQ): refused once it or its transport is closed, and a payload over
 * the transport's limit refused before it is sent.
 */
import { TransportClosedError } from './errors.js';
import type { OutgoingMessage, Producer } from './transport.js';

export interface SendChecks {
  /** Throws TransportClosedError once the transport is closed. */
  assertOpen(): void;
  maxMessageBytes: number;
  tooLarge(topic: string, size: number): Error;
}

export function checkedProducer(topic: string, checks: SendChecks, publish: (message: OutgoingMessage) => Promise<void>): Producer {
  let closed = false;
  return {
    topic,
    send: async (message: OutgoingMessage): Promise<void> => {
      if (closed) throw new TransportClosedError(`producer for ${topic}`);
      checks.assertOpen();
      const size = message.payload.length;
      if (size > checks.maxMessageBytes) throw checks.tooLarge(topic, size);
      await publish(message);
    },
    close: async () => {
      closed = true;
    },
  };
}
