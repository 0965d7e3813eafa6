/**
 * The transport over RabbitMQ (AMQP 0-9-1, `amqplib`), for TrustGraph deployments run with
 * `--pubsub-backend rabbitmq`. Exchanges and queues are TrustGraph's own (topology.ts).
 *
 * One connection per process, recovered by amqplib with a backoff capped at 2 s. After every (re)connect the
 * setup opens a confirm channel for publishing and gives each consumer a channel of its own again (its queue
 * declared and bound, its prefetch, its consume), and only then is the transport connected: a publish waits
 * for that and the settle (connection-status.ts), as on Pulsar. A publish resolves on the broker's confirm.
 *
 * Why amqplib: it hands over every message's bytes as they came. The other maintained client
 * (`rabbitmq-client`) parses every `application/json` body, which is what TrustGraph sends, with JSON.parse on
 * the event loop, before our own size and depth checks and codecs could see it.
 */
import amqplib, { type Channel, type ChannelModel, type ConfirmChannel, type ConsumeMessage, type RecoveringChannelModel } from 'amqplib';
import { pino, type Logger } from 'pino';
import { errorMessage } from '../../errors/index.js';
import { exponentialBackoff, retry } from '../../retry/index.js';
import { whenConnected } from '../when-connected.js';
import { checkedProducer } from '../checked-producer.js';
import { ConnectionStatus, StatusReporting } from '../connection-status.js';
import { deliver } from '../deliver.js';
import { ConnectError, FrameTooLargeError, NotConnectedError, TransportClosedError, UnacknowledgedSendError } from '../errors.js';
import { exchangeFor, queueFor, type RabbitExchange, type RabbitQueue } from './topology.js';
import type { Consumer, IncomingMessage, OutgoingMessage, Producer, ProducerOptions, SubscribeOptions, Transport } from '../transport.js';

export interface RabbitMqTransportOptions {
  /** `amqp://user:password@host:port/vhost` (topology.ts: rabbitMqUrl). */
  url: string;
  logger?: Logger;
  /** The broker's `max_message_size`; a larger payload is refused before it is sent. Default 16 MiB (RabbitMQ 4's default). */
  maxMessageBytes?: number;
  /** How long a publish may wait for a connection that is not whole. Default 30000 ms. */
  sendTimeoutMs?: number;
  /** How long publishes wait after a lost connection is whole again. Default 3000 ms. */
  reconnectSettleMs?: number;
}

export const DEFAULT_RABBITMQ_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** One subscription, attached again to every new connection. */
interface Subscription {
  readonly options: SubscribeOptions;
  readonly where: RabbitExchange;
  readonly queue: RabbitQueue;
  channel: Channel | undefined;
  closed: boolean;
}

export class RabbitMqTransport extends StatusReporting implements Transport {
  readonly kind = 'rabbitmq';
  private readonly logger: Logger;
  private readonly url: string;
  readonly maxMessageBytes: number;
  private readonly sendTimeoutMs: number;
  protected readonly connection: ConnectionStatus;
  private readonly subscriptions = new Set<Subscription>();
  private readonly recovering: Promise<RecoveringChannelModel>;
  private model: ChannelModel | undefined;
  /** The confirm channel publishes go through, and the exchanges declared on it (a publish to one not declared closes it). */
  private publishing: { channel: ConfirmChannel; declared: Set<string> } | undefined;
  private closed = false;
  private messageIds = 0;

  constructor(options: RabbitMqTransportOptions) {
    super();
    this.url = options.url;
    this.logger = options.logger ?? pino({ level: 'silent' });
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_RABBITMQ_MAX_MESSAGE_BYTES;
    this.sendTimeoutMs = options.sendTimeoutMs ?? 30_000;
    this.connection = new ConnectionStatus(options.reconnectSettleMs);
    this.connection.set(false, 'connecting to RabbitMQ');
    this.recovering = amqplib.connect(this.url, {
      // Nagle's algorithm held a small frame (a publish, an ack) while an earlier one was unacknowledged,
      // until the peer's delayed ACK: the echo round trip of bench:iteration took 88 ms instead of 1.3 ms.
      noDelay: true,
      recovery: {
        initialDelay: 100,
        maxDelay: 2000,
        maxRetries: Infinity,
        waitForConnect: false,
        setup: (model: ChannelModel) => this.attach(model),
      },
    });
    void this.recovering.then((recovering) => {
      recovering.on('disconnect', (err: Error) => this.lost(`RabbitMQ connection lost: ${err.message}`));
      recovering.on('connect-failed', (err: Error) => this.logger.debug({ err }, 'RabbitMQ connect attempt failed'));
      recovering.on('error', (err: Error) => this.logger.warn({ err }, 'RabbitMQ connection error'));
    });
  }

  maxPayloadBytes(): number {
    return this.maxMessageBytes;
  }

  /** `awaitSubscriber` does not apply: a request topic's queue keeps what nobody reads yet. */
  async createProducer(topic: string, _options?: ProducerOptions): Promise<Producer> {
    this.assertOpen();
    const where = exchangeFor(topic);
    return checkedProducer(topic, this, async (message) => {
      const publisher = await this.publisherWithin(this.sendTimeoutMs, topic);
      if (!publisher) {
        throw new NotConnectedError(`producer for ${topic} is not connected after ${this.sendTimeoutMs} ms (${this.connection.get().detail ?? 'reconnecting'})`);
      }
      await this.publish(await this.declared(publisher, where.exchange), where, message, topic);
    });
  }

  async subscribe(options: SubscribeOptions): Promise<Consumer> {
    this.assertOpen();
    const where = exchangeFor(options.topic);
    const subscription: Subscription = {
      options,
      where,
      queue: queueFor(where, options.subscription, options.subscriptionType),
      channel: undefined,
      closed: false,
    };
    const model = await this.connected();
    // Listed before it consumes: a connection lost meanwhile attaches it again with the others.
    this.subscriptions.add(subscription);
    try {
      await this.consume(model, subscription);
    } catch (err) {
      this.subscriptions.delete(subscription);
      subscription.closed = true;
      await subscription.channel?.close().catch(() => undefined);
      throw new ConnectError(`cannot subscribe to ${options.topic} as ${options.subscription}: ${errorMessage(err)}`, this.url.replace(/\/\/[^@]*@/, '//'), /ACCESS[-_]REFUSED|RESOURCE[-_]LOCKED|403|405/.test(errorMessage(err)) ? 409 : undefined, { cause: err });
    }
    return {
      topic: options.topic,
      subscription: options.subscription,
      close: async (closeOptions?: { unsubscribe?: boolean }) => {
        if (subscription.closed) return;
        subscription.closed = true;
        this.subscriptions.delete(subscription);
        const channel = subscription.channel;
        subscription.channel = undefined;
        if (!channel) return;
        if (closeOptions?.unsubscribe && subscription.queue.kind === 'named') {
          await channel.deleteQueue(subscription.queue.name).catch((err: unknown) => this.logger.debug({ err }, 'deleting a queue failed'));
        }
        await channel.close().catch(() => undefined);
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.subscriptions) s.closed = true;
    this.subscriptions.clear();
    this.connection.set(false, 'rabbitmq transport closed');
    const recovering = await this.recovering.catch(() => undefined);
    await recovering?.close().catch(() => undefined);
  }

  /** After each (re)connect: the publishing channel, then every subscription again; then connected. */
  private async attach(model: ChannelModel): Promise<void> {
    await this.openPublisher(model);
    for (const subscription of this.subscriptions) await this.consume(model, subscription);
    this.model = model;
    this.connection.set(true);
  }

  private lost(detail: string): void {
    this.model = undefined;
    this.publishing = undefined;
    for (const s of this.subscriptions) s.channel = undefined;
    if (this.closed) return;
    this.logger.warn(detail);
    this.connection.lost(detail);
  }

  /** The publishing channel once the connection is whole and settled (the first connection too), within `maxWaitMs`. */
  private async publisherWithin(maxWaitMs: number, topic: string): Promise<RabbitMqTransport['publishing']> {
    const deadline = performance.now() + maxWaitMs;
    if (!this.model && !(await this.connected(maxWaitMs).then(() => true, () => false))) return undefined;
    if (!(await this.connection.settled(Math.max(0, deadline - performance.now()), topic))) return undefined;
    return this.publishing;
  }

  /** The publishing channel, with `exchange` declared on it as TrustGraph's producer declares it (durable fanout). */
  private async declared(publishing: NonNullable<RabbitMqTransport['publishing']>, exchange: string): Promise<ConfirmChannel> {
    if (!publishing.declared.has(exchange)) {
      await publishing.channel.assertExchange(exchange, 'fanout', { durable: true });
      publishing.declared.add(exchange);
    }
    return publishing.channel;
  }

  /** A confirm channel for publishing on `model`, opened again if the broker closes it while the connection lives. */
  private async openPublisher(model: ChannelModel): Promise<void> {
    const channel = await model.createConfirmChannel();
    const publishing = { channel, declared: new Set<string>() };
    channel.on('error', (err: Error) => this.logger.warn({ err }, 'RabbitMQ closed the publishing channel'));
    channel.on('close', () => {
      if (this.publishing !== publishing) return;
      this.publishing = undefined;
      if (this.model !== model || this.closed) return;
      this.openPublisher(model).catch((err: unknown) => this.logger.warn({ err }, 'Could not open a RabbitMQ publishing channel again'));
    });
    this.publishing = publishing;
  }

  /**
   * The connection once it is whole, waiting up to `maxWaitMs` for it. Waits on the transport's own status, set
   * once a (re)connect has attached everything: amqplib's `waitForConnect()` rejects as soon as one attempt
   * fails, which made a publish during an outage fail at once instead of waiting for the broker.
   */
  private async connected(maxWaitMs = this.sendTimeoutMs): Promise<ChannelModel> {
    if (!this.model) await whenConnected(this, maxWaitMs, 'RabbitMQ');
    if (!this.model) throw new NotConnectedError('RabbitMQ connection is not ready');
    return this.model;
  }

  /** A channel for `subscription` on `model`: its exchange, its queue bound to it, its prefetch, its consumer. */
  private async consume(model: ChannelModel, subscription: Subscription): Promise<void> {
    const { options, where, queue } = subscription;
    const channel = await model.createChannel();
    channel.on('error', (err: Error) => this.logger.debug({ err, topic: options.topic }, 'RabbitMQ consumer channel error'));
    // Before the consume: the broker may deliver (a requeued message, say) before it has answered it.
    subscription.channel = channel;
    try {
      // TrustGraph declares every exchange durable, whatever its class.
      await channel.assertExchange(where.exchange, 'fanout', { durable: true });
      const name =
        queue.kind === 'private'
          ? (await channel.assertQueue('', { durable: false, exclusive: true, autoDelete: true })).queue
          : (
              await channel.assertQueue(queue.name, {
                durable: queue.durable,
                exclusive: false,
                autoDelete: false,
                ...(queue.singleActive ? { arguments: { 'x-single-active-consumer': true } } : {}),
              })
            ).queue;
      await channel.bindQueue(name, where.exchange, '');
      await channel.prefetch(options.receiverQueueSize ?? 1000);
      await channel.consume(name, (raw) => this.received(subscription, channel, raw), {
        exclusive: queue.kind === 'named' && queue.exclusiveConsumer,
      });
    } catch (err) {
      subscription.channel = undefined;
      await channel.close().catch(() => undefined);
      throw err;
    }
  }

  private received(subscription: Subscription, channel: Channel, raw: ConsumeMessage | null): void {
    const { options } = subscription;
    if (raw === null) {
      if (subscription.closed || subscription.channel !== channel) return;
      this.logger.warn({ topic: options.topic, subscription: options.subscription }, 'RabbitMQ cancelled a consumer (its queue was deleted or restarted); consuming again');
      this.consumeAgain(subscription, channel);
      return;
    }
    if (subscription.closed || subscription.channel !== channel) return;
    deliver(options.handler, this.incoming(subscription, channel, raw), this.logger, { topic: options.topic, subscription: options.subscription });
  }

  /**
   * A consumer the broker cancelled (`basic.cancel`: its queue deleted, or restarted) gets nothing more on that
   * channel, though the connection stands and no reconnect would attach it again: the queue is declared and
   * consumed again on a new channel, retried while the connection lasts (a reconnect takes over after that).
   */
  private consumeAgain(subscription: Subscription, cancelled: Channel): void {
    subscription.channel = undefined;
    void cancelled.close().catch(() => undefined);
    const model = this.model;
    if (!model) return;
    const current = (): boolean => !subscription.closed && !this.closed && this.model === model;
    retry(
      async () => {
        if (current() && !subscription.channel) await this.consume(model, subscription);
      },
      { backoff: exponentialBackoff({ initialMs: 100, maxMs: 2000, jitter: 'equal' }), retryIf: current },
    ).catch((err: unknown) => this.logger.warn({ err, topic: subscription.options.topic }, 'Could not consume again after RabbitMQ cancelled a consumer; the next reconnect will'));
  }

  private incoming(subscription: Subscription, channel: Channel, raw: ConsumeMessage): IncomingMessage {
    let settled = false;
    const delayMs = subscription.options.negativeAckRedeliveryDelayMs ?? 1000;
    const settle = (action: () => void): void => {
      // A message of a channel that is gone was requeued by the broker; its delivery tag means nothing now.
      if (settled || subscription.channel !== channel) return;
      settled = true;
      try {
        action();
      } catch (err) {
        this.logger.debug({ err, topic: subscription.options.topic }, 'acknowledging on a closed channel');
      }
    };
    return {
      messageId: `${raw.fields.consumerTag}:${raw.fields.deliveryTag}:${++this.messageIds}`,
      topic: subscription.options.topic,
      payload: raw.content,
      properties: stringHeaders(raw.properties.headers),
      redeliveryCount: raw.fields.redelivered ? 1 : 0,
      ack: async () => settle(() => channel.ack(raw)),
      // Requeued, as TrustGraph's consumer does, after the redelivery delay.
      nack: async () => {
        if (settled) return;
        setTimeout(() => settle(() => channel.nack(raw, false, true)), delayMs).unref();
      },
    };
  }

  private publish(channel: ConfirmChannel, where: RabbitExchange, message: OutgoingMessage, topic: string): Promise<void> {
    return new Promise((resolve, reject) => {
      try {
        channel.publish(
          where.exchange,
          '',
          message.payload,
          {
            contentType: 'application/json',
            deliveryMode: where.durable ? 2 : 1,
            ...(message.properties && Object.keys(message.properties).length > 0 ? { headers: message.properties } : {}),
          },
          (err: unknown) => {
            if (err) reject(new UnacknowledgedSendError(`send on ${topic} failed: the broker did not confirm it (${errorMessage(err)})`, { cause: err }));
            else resolve();
          },
        );
      } catch (err) {
        reject(new NotConnectedError(`send on ${topic} failed before it was written: ${errorMessage(err)}`));
      }
    });
  }

  tooLarge(topic: string, size: number): FrameTooLargeError {
    return new FrameTooLargeError(
      topic,
      size,
      this.maxMessageBytes,
      size,
      `message for ${topic} is ${size} bytes, over RabbitMQ's ${this.maxMessageBytes}-byte max_message_size; it was not sent`,
    );
  }

  assertOpen(): void {
    if (this.closed) throw new TransportClosedError('rabbitmq transport');
  }
}

/** AMQP headers as TrustGraph's properties: strings (a header the client decoded as bytes becomes its UTF-8 text). */
function stringHeaders(headers: Record<string, unknown> | undefined): Record<string, string> {
  if (!headers) return {};
  return Object.fromEntries(Object.entries(headers).map(([key, value]) => [key, Buffer.isBuffer(value) ? value.toString('utf8') : String(value)]));
}
