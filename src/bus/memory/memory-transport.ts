/**
 * An in-process bus for unit tests, faithful to the Pulsar behaviour the service relies on:
 *
 * - a subscription receives only what is published after it exists (initial position Latest); a message
 *   published to a topic with no subscription is dropped;
 * - every subscription gets its own copy; Shared subscriptions hand each message to the next consumer with
 *   room, round robin; Key_Shared hands every message of one key to the same consumer (the key's hash over
 *   the consumers; keyless messages round robin), so when a consumer leaves its keys move to the others;
 *   Exclusive refuses a second consumer and Failover delivers to the first one only;
 * - at most `receiverQueueSize` unacknowledged messages per consumer; on a persistent topic a nack redelivers
 *   after `negativeAckRedeliveryDelayMs`, with `redeliveryCount + 1` on Shared and Key_Shared subscriptions
 *   (the broker tracks redeliveries only there: on Exclusive and Failover the count stays 0); on a
 *   non-persistent topic a nacked message is gone, as on the broker, which stores nothing to redeliver;
 * - `persistent://` subscriptions are durable: they outlive their consumers, keep a backlog and get their
 *   unacknowledged messages back when a consumer closes; a `non-persistent://` subscription disappears with
 *   its last consumer, and a closing consumer's unacknowledged messages are lost;
 * - delivery is asynchronous: a handler never runs inside `send`;
 * - `dropConnection()` plays a broker outage: a new epoch begins, sends fail with a retriable error and
 *   nothing is delivered until `restoreConnection()`; non-persistent subscriptions lose what was published
 *   or in flight meanwhile (persistent ones keep their backlog).
 */
import { pino, type Logger } from 'pino';
import { deliver } from '../deliver.js';
import { ConnectionStatus, StatusReporting } from '../connection-status.js';
import { ConnectError, TransportClosedError, TransportError } from '../errors.js';
import type {
  Consumer,
  IncomingMessage,
  OutgoingMessage,
  Producer,
  ProducerOptions,
  Properties,
  SubscribeOptions,
  SubscriptionType,
  Transport,
} from '../transport.js';

export interface MemoryTransportOptions {
  /** Default: silent. */
  logger?: Logger;
}

interface StoredMessage {
  readonly id: string;
  readonly topic: string;
  readonly payload: Buffer;
  readonly properties: Properties;
  readonly key?: string;
  readonly redeliveryCount: number;
}

interface MemoryConsumerState {
  readonly options: SubscribeOptions;
  readonly receiverQueueSize: number;
  readonly nackDelayMs: number;
  /** Delivered and neither acked nor nacked. */
  readonly inFlight: Map<string, StoredMessage>;
  closed: boolean;
}

interface SubscriptionState {
  readonly name: string;
  type: SubscriptionType;
  readonly consumers: MemoryConsumerState[];
  /** Waiting for a consumer with room. */
  readonly backlog: StoredMessage[];
  nextConsumer: number;
  dispatchScheduled: boolean;
}

interface TopicState {
  readonly persistent: boolean;
  readonly subscriptions: Map<string, SubscriptionState>;
}

/** What a test may want to look at. */
export interface MemorySubscriptionInfo {
  name: string;
  type: SubscriptionType;
  consumers: number;
  backlog: number;
  unacked: number;
}

const DEFAULT_RECEIVER_QUEUE_SIZE = 1000;
const DEFAULT_NACK_DELAY_MS = 1000;

export class MemoryTransport extends StatusReporting implements Transport {
  readonly kind = 'memory';
  private readonly logger: Logger;
  private readonly topics = new Map<string, TopicState>();
  private readonly timers = new Set<NodeJS.Timeout>();
  protected readonly connection = new ConnectionStatus();
  private closed = false;
  private down = false;
  private sequence = 0;

  constructor(options: MemoryTransportOptions = {}) {
    super();
    this.logger = options.logger ?? pino({ level: 'silent' });
  }

  async createProducer(topic: string, _options?: ProducerOptions): Promise<Producer> {
    this.assertOpen();
    parseDomain(topic);
    let producerClosed = false;
    return {
      topic,
      send: async (message: OutgoingMessage): Promise<void> => {
        if (producerClosed) throw new TransportClosedError(`producer for ${topic}`);
        this.assertOpen();
        if (this.down) throw new TransportError(`memory transport: not connected, the message to ${topic} was not sent`, { retriable: true });
        this.publish(topic, message);
      },
      close: async (): Promise<void> => {
        producerClosed = true;
      },
    };
  }

  async subscribe(options: SubscribeOptions): Promise<Consumer> {
    this.assertOpen();
    const { topic, subscription: name, subscriptionType: type } = options;
    const topicState = this.topicState(topic);
    let sub = topicState.subscriptions.get(name);
    if (sub && sub.consumers.length > 0) {
      if (sub.type !== type) {
        throw busy(topic, name, `subscription is of a different type (${sub.type}, asked for ${type})`);
      }
      if (type === 'Exclusive') throw busy(topic, name, 'Exclusive consumer is already connected');
    }
    if (!sub) {
      sub = { name, type, consumers: [], backlog: [], nextConsumer: 0, dispatchScheduled: false };
      topicState.subscriptions.set(name, sub);
    }
    sub.type = type;
    const state: MemoryConsumerState = {
      options,
      receiverQueueSize: Math.max(1, options.receiverQueueSize ?? DEFAULT_RECEIVER_QUEUE_SIZE),
      nackDelayMs: options.negativeAckRedeliveryDelayMs ?? DEFAULT_NACK_DELAY_MS,
      inFlight: new Map(),
      closed: false,
    };
    sub.consumers.push(state);
    this.scheduleDispatch(sub);
    const subscriptionState = sub;
    return {
      topic,
      subscription: name,
      close: async (closeOptions?: { unsubscribe?: boolean }): Promise<void> => {
        this.closeConsumer(topicState, subscriptionState, state, closeOptions?.unsubscribe ?? false);
      },
    };
  }

  /** A broker outage begins (see the module comment). */
  dropConnection(): void {
    if (this.closed || this.down) return;
    this.down = true;
    for (const topic of this.topics.values()) {
      for (const sub of topic.subscriptions.values()) {
        // The broker redelivers a persistent subscription's unacknowledged messages after a reconnect.
        const unacked = sub.consumers.flatMap((consumer) => [...consumer.inFlight.values()]);
        for (const consumer of sub.consumers) consumer.inFlight.clear();
        if (topic.persistent) sub.backlog.unshift(...unacked);
        else sub.backlog.length = 0;
      }
    }
    this.connection.lost('memory transport: connection dropped');
  }

  /** The outage ends: delivery resumes. */
  restoreConnection(): void {
    if (this.closed || !this.down) return;
    this.down = false;
    this.connection.set(true);
    for (const topic of this.topics.values()) for (const sub of topic.subscriptions.values()) this.scheduleDispatch(sub);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.connection.set(false, 'memory transport closed');
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const topic of this.topics.values()) {
      for (const sub of topic.subscriptions.values()) {
        for (const consumer of sub.consumers) consumer.closed = true;
      }
    }
    this.topics.clear();
  }

  /** The subscriptions that exist on a topic, for assertions in tests. */
  subscriptions(topic: string): MemorySubscriptionInfo[] {
    const state = this.topics.get(topic);
    if (!state) return [];
    return [...state.subscriptions.values()].map((sub) => ({
      name: sub.name,
      type: sub.type,
      consumers: sub.consumers.length,
      backlog: sub.backlog.length,
      unacked: sub.consumers.reduce((n, c) => n + c.inFlight.size, 0),
    }));
  }

  private assertOpen(): void {
    if (this.closed) throw new TransportClosedError('memory transport');
  }

  private topicState(topic: string): TopicState {
    let state = this.topics.get(topic);
    if (!state) {
      state = { persistent: parseDomain(topic) === 'persistent', subscriptions: new Map() };
      this.topics.set(topic, state);
    }
    return state;
  }

  private publish(topic: string, message: OutgoingMessage): void {
    const state = this.topics.get(topic);
    if (!state || state.subscriptions.size === 0) {
      this.logger.debug({ topic }, 'no subscription: message dropped');
      return;
    }
    const id = `memory:${++this.sequence}`;
    for (const sub of state.subscriptions.values()) {
      sub.backlog.push({
        id,
        topic,
        payload: Buffer.from(message.payload),
        properties: { ...message.properties },
        ...(message.key !== undefined ? { key: message.key } : {}),
        redeliveryCount: 0,
      });
      this.scheduleDispatch(sub);
    }
  }

  private scheduleDispatch(sub: SubscriptionState): void {
    if (sub.dispatchScheduled) return;
    sub.dispatchScheduled = true;
    setImmediate(() => {
      sub.dispatchScheduled = false;
      this.dispatch(sub);
    });
  }

  private dispatch(sub: SubscriptionState): void {
    if (sub.type === 'Key_Shared') {
      this.dispatchByKey(sub);
      return;
    }
    while (sub.backlog.length > 0 && !this.closed && !this.down) {
      const consumer = this.pickConsumer(sub);
      if (!consumer) return;
      const message = sub.backlog.shift() as StoredMessage;
      consumer.inFlight.set(message.id, message);
      this.deliver(sub, consumer, message);
    }
  }

  /** Key_Shared: each keyed message to its key's consumer, in order per key; a full consumer holds its keys back. */
  private dispatchByKey(sub: SubscriptionState): void {
    const held = new Set<string>();
    for (let i = 0; i < sub.backlog.length && !this.closed && !this.down; ) {
      const message = sub.backlog[i]!;
      const open = sub.consumers.filter((c) => !c.closed);
      const consumer =
        message.key === undefined ? this.pickConsumer(sub) : open.length > 0 ? open[keyHash(message.key) % open.length] : undefined;
      const blocked = message.key !== undefined && held.has(message.key);
      if (!consumer || blocked || consumer.inFlight.size >= consumer.receiverQueueSize) {
        if (message.key !== undefined) held.add(message.key);
        i++;
        continue;
      }
      sub.backlog.splice(i, 1);
      consumer.inFlight.set(message.id, message);
      this.deliver(sub, consumer, message);
    }
  }

  private pickConsumer(sub: SubscriptionState): MemoryConsumerState | undefined {
    const hasRoom = (c: MemoryConsumerState): boolean => !c.closed && c.inFlight.size < c.receiverQueueSize;
    if (sub.type === 'Exclusive' || sub.type === 'Failover') {
      const active = sub.consumers[0];
      return active && hasRoom(active) ? active : undefined;
    }
    const n = sub.consumers.length;
    for (let i = 0; i < n; i++) {
      const index = (sub.nextConsumer + i) % n;
      const candidate = sub.consumers[index];
      if (candidate && hasRoom(candidate)) {
        sub.nextConsumer = (index + 1) % n;
        return candidate;
      }
    }
    return undefined;
  }

  private deliver(sub: SubscriptionState, consumer: MemoryConsumerState, stored: StoredMessage): void {
    const persistent = this.topics.get(stored.topic)?.persistent ?? false;
    let settled = false;
    const settle = (): boolean => {
      if (settled || consumer.closed || !consumer.inFlight.has(stored.id)) return false;
      settled = true;
      consumer.inFlight.delete(stored.id);
      return true;
    };
    const message: IncomingMessage = {
      messageId: stored.id,
      topic: stored.topic,
      payload: stored.payload,
      properties: stored.properties,
      redeliveryCount: stored.redeliveryCount,
      ack: async () => {
        if (settle()) this.scheduleDispatch(sub);
      },
      nack: async () => {
        if (!settle()) return;
        this.scheduleDispatch(sub);
        if (!persistent) return;
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          if (this.closed || !this.subscriptionAlive(stored.topic, sub)) return;
          const counted = sub.type === 'Shared' || sub.type === 'Key_Shared';
          sub.backlog.unshift({ ...stored, redeliveryCount: stored.redeliveryCount + (counted ? 1 : 0) });
          this.scheduleDispatch(sub);
        }, consumer.nackDelayMs);
        this.timers.add(timer);
      },
    };
    const { handler, topic, subscription } = consumer.options;
    setImmediate(() => {
      if (consumer.closed || !consumer.inFlight.has(stored.id)) return;
      deliver(handler, message, this.logger, { topic, subscription });
    });
  }

  private subscriptionAlive(topic: string, sub: SubscriptionState): boolean {
    return this.topics.get(topic)?.subscriptions.get(sub.name) === sub;
  }

  private closeConsumer(
    topicState: TopicState,
    sub: SubscriptionState,
    consumer: MemoryConsumerState,
    unsubscribe: boolean,
  ): void {
    if (consumer.closed) return;
    consumer.closed = true;
    const index = sub.consumers.indexOf(consumer);
    if (index >= 0) sub.consumers.splice(index, 1);
    if (sub.nextConsumer >= sub.consumers.length) sub.nextConsumer = 0;
    const unacked = [...consumer.inFlight.values()];
    consumer.inFlight.clear();
    const last = sub.consumers.length === 0;
    if (last && (unsubscribe || !topicState.persistent)) {
      topicState.subscriptions.delete(sub.name);
      return;
    }
    if (topicState.persistent) {
      sub.backlog.unshift(...unacked);
      this.scheduleDispatch(sub);
    }
  }
}

/** A stable hash of a message key (FNV-1a), to pick its consumer. */
function keyHash(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}

function parseDomain(topic: string): 'persistent' | 'non-persistent' {
  if (topic.startsWith('persistent://')) return 'persistent';
  if (topic.startsWith('non-persistent://')) return 'non-persistent';
  throw new ConnectError(`not a full Pulsar topic name: ${topic}`, `memory:${topic}`, 400);
}

function busy(topic: string, subscription: string, why: string): ConnectError {
  return new ConnectError(
    `cannot subscribe to ${topic} as ${subscription}: ${why} (409, consumer busy)`,
    `memory:${topic}/${subscription}`,
    409,
  );
}
