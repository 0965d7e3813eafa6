/**
 * Where a topic lives on RabbitMQ, exactly as TrustGraph's RabbitMQ backend puts it
 * (`trustgraph/base/async_rabbitmq_backend.py`), so that tg-agent and TrustGraph's services meet on the same
 * exchanges and queues.
 *
 * The rest of tg-agent names topics as Pulsar does (topics.ts: queue id `class:topicspace:topic` →
 * `non-persistent://topicspace/class/topic`); this turns that back into TrustGraph's RabbitMQ names:
 *
 * - every topic is a durable **fanout exchange** `topicspace.class.topic`; a producer publishes to it with an
 *   empty routing key, persistent messages on `flow` topics only;
 * - a `response` or `notify` subscriber gets its own **server-named, exclusive, auto-delete queue**, so every
 *   subscriber sees every message (a reply, a config push) and the queue goes with its connection;
 * - any other subscription is the **named queue** `<exchange>.<subscription>`, durable on `flow` topics, never
 *   auto-deleted: its consumers compete for its messages, and it keeps them while nobody reads (unlike a
 *   non-persistent Pulsar topic, which drops them).
 *
 * A topic outside TrustGraph's four classes (our own, or a test's) is durable when it is `persistent://`.
 */
import { splitPulsarTopic, type QueueClass, QUEUE_CLASSES } from '../topics.js';
import type { SubscriptionType } from '../transport.js';

export interface RabbitExchange {
  /** `topicspace.class.topic`. */
  exchange: string;
  /** TrustGraph's class, when the topic's namespace is one. */
  cls: QueueClass | undefined;
  /** Durable queues and persistent messages. */
  durable: boolean;
}

/** What a subscription consumes from. */
export type RabbitQueue =
  /** A server-named queue of this subscriber's own, gone with its connection. */
  | { kind: 'private' }
  /** A queue shared by every consumer of the subscription. */
  | { kind: 'named'; name: string; durable: boolean; singleActive: boolean; exclusiveConsumer: boolean };

export function exchangeFor(topic: string): RabbitExchange {
  const { persistence, tenant, namespace, topic: local } = splitPulsarTopic(topic);
  const cls = (QUEUE_CLASSES as readonly string[]).includes(namespace) ? (namespace as QueueClass) : undefined;
  return { exchange: `${tenant}.${namespace}.${local}`, cls, durable: persistence === 'persistent' };
}

/**
 * The queue of a subscription. `response` / `notify` topics: a private queue, as TrustGraph's. Otherwise the
 * named queue; our subscription types on it: Exclusive refuses a second consumer, Failover and Key_Shared give
 * every message to one consumer at a time (a single-active-consumer queue: the next one takes over, with the
 * unacknowledged messages, when it goes), Shared lets consumers compete. TrustGraph declares its queues with no
 * arguments, and RabbitMQ refuses a second declaration that differs, so only our own Failover and Key_Shared
 * subscriptions carry one.
 */
export function queueFor(where: RabbitExchange, subscription: string, type: SubscriptionType): RabbitQueue {
  if (where.cls === 'response' || where.cls === 'notify') return { kind: 'private' };
  return {
    kind: 'named',
    name: `${where.exchange}.${subscription}`,
    durable: where.durable,
    singleActive: type === 'Failover' || type === 'Key_Shared',
    exclusiveConsumer: type === 'Exclusive',
  };
}

/** `amqp://user:password@host:port/vhost` from TrustGraph's RabbitMQ options (the vhost URL-encoded: `/` is `%2F`). */
export function rabbitMqUrl(options: { host: string; port: number; username: string; password: string; vhost: string }): string {
  const user = encodeURIComponent(options.username);
  const password = encodeURIComponent(options.password);
  return `amqp://${user}:${password}@${options.host}:${options.port}/${encodeURIComponent(options.vhost)}`;
}
