/** The messages a native consumer delivers, as the transport's IncomingMessage. */
import type { Logger } from 'pino';
import type { IncomingMessage } from '../../transport.js';
import type { NativeConsumer, NativeMessage, PlainNativeMessage } from './pulsar-client-module.js';

/** A message from a non-persistent topic, already copied: acknowledging it is a no-op, as on the broker. */
export function plainIncoming(raw: PlainNativeMessage, topic: string): IncomingMessage {
  return {
    messageId: raw.messageId,
    topic,
    payload: raw.data,
    properties: raw.properties,
    redeliveryCount: raw.redeliveryCount,
    ack: async () => undefined,
    nack: async () => undefined,
  };
}

/** A message the C++ consumer still holds, acknowledged through it. */
export function wrappedIncoming(raw: NativeMessage, consumer: NativeConsumer, nonPersistent: boolean, where: { topic: string; subscription: string }, logger: Logger): IncomingMessage {
  let settled = false;
  return {
    // Read only when asked for (a failure's log line): two N-API calls and an object per message.
    get messageId() {
      return raw.getMessageId().toString();
    },
    topic: where.topic,
    payload: raw.getData(),
    properties: plainProperties(raw.getProperties()),
    redeliveryCount: raw.getRedeliveryCount(),
    // Handed to the client, not awaited: its callback comes back from a client thread in any order,
    // so code that acks first and then records a message would reorder messages (the WebSocket
    // transport's ack also resolves once the ack is sent, without an answer from the broker). An ack
    // that never reaches the broker only means a redelivery.
    ack: async () => {
      if (settled) return;
      settled = true;
      // The broker keeps nothing to acknowledge on a non-persistent topic; the binding's ack would
      // still cost a thread-safe callback per message.
      if (nonPersistent) return;
      consumer.acknowledge(raw).catch((err: unknown) => logger.warn({ err, ...where }, 'acknowledge failed: the broker will redeliver'));
    },
    nack: async () => {
      if (settled) return;
      settled = true;
      consumer.negativeAcknowledge(raw);
    },
  };
}

/** The binding's array-like properties object as a plain string map. */
export function plainProperties(raw: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(raw).map(([key, value]) => [key, String(value)]));
}
