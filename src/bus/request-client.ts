/**
 * TrustGraph's correlated request/response client (`request_response_client.py`): one producer on a service's
 * request topic and one Exclusive consumer, under a subscription of its own, on the service's response topic.
 * Every request carries a fresh uuid in the `id` message property; the service copies it onto each of its
 * responses. The response topic is shared by every caller of the service, so each client sees every response
 * and keeps those with the ids it is waiting for; all of them are acknowledged.
 *
 * The timeout applies to each wait for the next message, not to the whole exchange (a stream resets it on
 * every reply), as in TrustGraph; a stream's waits after its first reply may have a timeout of their own
 * (`gapTimeoutMs`): a stream that started and then fell silent has lost a message.
 *
 * A broker connection lost while a request waits (a broker restart) may have taken its response with it: the
 * response topic is non-persistent. So once the transport is whole again after a loss, every request that was
 * waiting before it fails at once with ConnectionLostError instead of holding its caller until the timeout.
 * A client whose service is safe to call twice (`repeatable`: it only reads, as the prompt service and the
 * queries do) sends such a request once more, with a fresh id, if nothing of its answer had come yet; so too
 * a request the connection lost before the broker acknowledged it. A tool that acts (an MCP tool, a tool
 * service, a librarian save) is never sent twice.
 *
 * Such a client may also hedge (`hedge`): a request whose first reply is overdue against the service's recent
 * latency is sent once more beside the first, and the first answer wins (hedged-stream.ts).
 *
 * Clients given the same `slots` share a bound on their requests in flight (call-slots.ts): a request waits,
 * in order, for a slot before it is published. The wait counts in its timeout for the first reply, so a sending
 * never waits longer than its timeout in all; one that times out still waiting fails with
 * CallQueueTimeoutError, never sent. Every sending (a hedge, a second sending after a lost connection) takes
 * a slot of its own, and gives it back when its wait ends, however it ends.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { pino, type Logger } from 'pino';
import { type Codec, WireDecodeError } from '../wire/index.js';
import { lostBeforeAnswer, RequestAbandonedError, RequestTimeoutError, TransportClosedError } from './errors.js';
import type { CallSlots } from './call-slots.js';
import { PendingRequest } from './pending-request.js';
import type { Consumer, IncomingMessage, Producer, Transport, TransportStatus } from './transport.js';
import { firstReply, replies, type Abandonment, type StartAttempt } from './hedged-stream.js';
import type { HedgePolicy } from './hedge-policy.js';
import { errorMessage, InvalidUseError } from '../errors/index.js';

export interface RequestClientOptions<Req, Res> {
  transport: Transport;
  /** Full Pulsar topic name the service consumes. */
  requestTopic: string;
  /** Full Pulsar topic name the service answers on. */
  responseTopic: string;
  requestCodec: Codec<Req>;
  responseCodec: Codec<Res>;
  /** Exclusive subscription on the response topic. Default `rr-` + 12 random hex digits. */
  subscriptionName?: string;
  /** Default wait for each response, in ms. */
  timeoutMs: number;
  /** Default wait for each response of a stream after its first, in ms. Default: `timeoutMs`. */
  gapTimeoutMs?: number;
  /** Default: silent. */
  logger?: Logger;
  /** Told how each call ended (TrustGraph's `tg_downstream_*` metrics). */
  observer?: CallObserver<Res>;
  /**
   * The service may be asked twice for one answer: a request whose reply may have gone with a lost broker
   * connection, and of which nothing came yet, is sent once more. Default false.
   */
  repeatable?: boolean;
  /** Send a request whose first reply is overdue once more, by this policy (a `repeatable` service only). */
  hedge?: HedgePolicy;
  /** The bound on requests in flight to the request topic, shared by its clients. Absent: no bound. */
  slots?: CallSlots;
}

/** How one call ended: `ok` (with the service's own error type, if its reply carried one), `timeout`, `failed`. */
export interface CallObserver<Res> {
  /** The service's error type of a reply, if it carries one (`error.type`). */
  errorOf?(response: Res): string | undefined;
  ended(outcome: { seconds: number; status: 'ok' | 'timeout' | 'error'; errorType?: string }): void;
}

export interface RequestOptions {
  /** Overrides the client's timeout for this request. */
  timeoutMs?: number;
  /** Overrides the client's wait after a stream's first reply. */
  gapTimeoutMs?: number;
}

export interface StreamOptions<Res> extends RequestOptions {
  /** The service's end flag: `end_of_stream`, `end_of_session`, `end_of_dialog`, or an error. */
  isLast: (response: Res) => boolean;
}

export class RequestClient<Req, Res> {
  readonly requestTopic: string;
  readonly responseTopic: string;
  readonly subscriptionName: string;
  private readonly transport: Transport;
  private readonly requestCodec: Codec<Req>;
  private readonly responseCodec: Codec<Res>;
  private readonly timeoutMs: number;
  private readonly gapTimeoutMs: number;
  private readonly logger: Logger;
  private readonly observer: CallObserver<Res> | undefined;
  private readonly repeatable: boolean;
  private readonly hedge: HedgePolicy | undefined;
  private readonly slots: CallSlots | undefined;
  private readonly waiters = new Map<string, PendingRequest<Res>>();
  private starting: Promise<void> | undefined;
  private consumer: Consumer | undefined;
  private producer: Producer | undefined;
  private readonly stopListening: () => void;
  private closed = false;

  constructor(options: RequestClientOptions<Req, Res>) {
    if (!Number.isFinite(options.timeoutMs) || options.timeoutMs <= 0) {
      throw new InvalidUseError(`timeoutMs must be a finite number greater than 0, got ${options.timeoutMs}`);
    }
    this.transport = options.transport;
    this.requestTopic = options.requestTopic;
    this.responseTopic = options.responseTopic;
    this.requestCodec = options.requestCodec;
    this.responseCodec = options.responseCodec;
    this.timeoutMs = options.timeoutMs;
    if (options.gapTimeoutMs !== undefined && (!Number.isFinite(options.gapTimeoutMs) || options.gapTimeoutMs <= 0)) {
      throw new InvalidUseError(`gapTimeoutMs must be a finite number greater than 0, got ${options.gapTimeoutMs}`);
    }
    this.gapTimeoutMs = options.gapTimeoutMs ?? options.timeoutMs;
    this.subscriptionName = options.subscriptionName ?? `rr-${randomBytes(6).toString('hex')}`;
    this.observer = options.observer;
    this.repeatable = options.repeatable ?? false;
    if (options.hedge && !this.repeatable) throw new InvalidUseError(`a request client that hedges must be repeatable (${options.requestTopic})`);
    this.hedge = options.hedge;
    this.slots = options.slots;
    this.logger = (options.logger ?? pino({ level: 'silent' })).child({
      requestTopic: this.requestTopic,
      subscription: this.subscriptionName,
    });
    this.stopListening = this.transport.onStatus((status) => this.onStatus(status));
  }

  /** Requests waiting since before the latest lost connection fail once the transport is whole again. */
  private onStatus(status: TransportStatus): void {
    if (!status.connected) return;
    const lost = [...this.waiters.values()].filter((waiter) => waiter.epoch < status.epoch);
    if (lost.length === 0) return;
    this.logger.warn({ requests: lost.length, epoch: status.epoch }, 'Broker connection was lost while requests waited; failing them');
    for (const waiter of lost) waiter.onLost();
  }

  /**
   * Subscribes to the response topic, then creates the request producer: subscribe before publish, so no
   * reply on a non-persistent topic can be missed. Idempotent; `request` and `stream` call it.
   */
  start(): Promise<void> {
    if (this.closed) return Promise.reject(new TransportClosedError(`request client for ${this.requestTopic}`));
    this.starting ??= this.open().catch((err: unknown) => {
      this.starting = undefined;
      throw err;
    });
    return this.starting;
  }

  /** Sends one request and resolves with the first response that carries its id. */
  async request(request: Req, options: RequestOptions = {}): Promise<Res> {
    const started = performance.now();
    try {
      const once = (repeated: boolean): Promise<Res> =>
        firstReply(this.attempt(request, { ...options, isLast: () => true }, repeated), this.hedge, options.timeoutMs ?? this.timeoutMs, this.crowded);
      const response = await once(false).catch((error: unknown) => {
        if (!this.repeatsAfter(error)) throw error;
        return once(true);
      });
      this.observe(started, response);
      return response;
    } catch (error) {
      this.observe(started, undefined, error);
      throw error;
    }
  }

  private observe(started: number, response: Res | undefined, error?: unknown): void {
    if (!this.observer) return;
    const seconds = (performance.now() - started) / 1000;
    if (error !== undefined) {
      const status = error instanceof RequestTimeoutError ? 'timeout' : 'error';
      const errorType = status === 'error' ? ((error as Error).name ?? 'Error') : undefined;
      this.observer.ended({ seconds, status, ...(errorType ? { errorType } : {}) });
      return;
    }
    const errorType = response === undefined ? undefined : this.observer.errorOf?.(response);
    this.observer.ended({ seconds, status: errorType ? 'error' : 'ok', ...(errorType ? { errorType } : {}) });
  }

  /** Whether requests to the topic wait for a slot now: an overdue one is then not hedged. */
  private readonly crowded = (): boolean => (this.slots?.queued ?? 0) > 0;

  /** Whether a request that failed with `error` is sent again: a repeatable service, and nothing of its answer came. */
  private repeatsAfter(error: unknown): boolean {
    const why = this.repeatable ? lostBeforeAnswer(error) : undefined;
    if (why) this.logger.info({ err: error }, `${why}; sending it once more`);
    return why !== undefined;
  }

  /** One try of a request, as hedged-stream.ts starts it (twice, when the client hedges and its reply is overdue). */
  private attempt(request: Req, options: StreamOptions<Res>, repeated: boolean): StartAttempt<Res> {
    return (abandonment) => this.streamOnce(request, options, repeated, abandonment);
  }

  /**
   * Sends one request and yields every response that carries its id, up to and including the one for which
   * `isLast` is true. The request is published when iteration starts; leaving the loop early stops listening.
   * Throws RequestTimeoutError when the gap before the next response exceeds the timeout.
   */
  async *stream(request: Req, options: StreamOptions<Res>): AsyncGenerator<Res, void, undefined> {
    const started = performance.now();
    let lastResponse: Res | undefined;
    let failure: unknown;
    try {
      let repeated = false;
      for (;;) {
        try {
          for await (const response of replies(this.attempt(request, options, repeated), this.hedge, options.timeoutMs ?? this.timeoutMs, this.crowded)) {
            lastResponse = response;
            yield response;
          }
          break;
        } catch (error) {
          if (repeated || !this.repeatsAfter(error)) throw error;
          repeated = true;
        }
      }
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      this.observe(started, lastResponse, failure);
    }
  }

  /**
   * One request sent, its replies yielded; once abandoned it stops listening (a later reply is ignored). With
   * `slots`, it waits for a slot first, within its timeout for the first reply.
   */
  private async *streamOnce(request: Req, options: StreamOptions<Res>, repeated: boolean, abandonment?: Abandonment): AsyncGenerator<Res, void, undefined> {
    const payload = this.requestCodec.encode(request);
    await this.start();
    const id = randomUUID();
    const firstMs = options.timeoutMs ?? this.timeoutMs;
    const pending = new PendingRequest<Res>({
      requestTopic: this.requestTopic,
      id,
      firstMs,
      gapMs: options.gapTimeoutMs ?? (options.timeoutMs === undefined ? this.gapTimeoutMs : options.timeoutMs),
      repeated,
      isLast: options.isLast,
      status: () => this.transport.status(),
      ended: () => this.waiters.delete(id),
      slots: this.slots,
    });
    this.waiters.set(id, pending);
    abandonment?.onAbandon(() => pending.fail(new RequestAbandonedError(this.requestTopic, id)));
    try {
      if (abandonment?.abandoned) throw new RequestAbandonedError(this.requestTopic, id);
      if (pending.waitingForSlot) await pending.sendable();
      if (!pending.failedEarly) await this.publish(id, payload);
      for (;;) {
        const item = await pending.next();
        if ('error' in item) throw item.error;
        yield item.value;
        if (item.last) return;
      }
    } finally {
      pending.stop();
      abandonment?.onAbandon(undefined);
    }
  }

  /** Fails every pending request, removes the response subscription and closes the producer. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopListening();
    const error = new TransportClosedError(`request client for ${this.requestTopic}`);
    for (const waiter of [...this.waiters.values()]) waiter.fail(error);
    this.waiters.clear();
    await this.starting?.catch(() => undefined);
    const consumer = this.consumer;
    const producer = this.producer;
    this.consumer = undefined;
    this.producer = undefined;
    await Promise.all([
      consumer?.close({ unsubscribe: true }).catch((err: unknown) => this.logger.debug({ err }, 'closing consumer')),
      producer?.close().catch((err: unknown) => this.logger.debug({ err }, 'closing producer')),
    ]);
  }

  private async open(): Promise<void> {
    const consumer = await this.transport.subscribe({
      topic: this.responseTopic,
      subscription: this.subscriptionName,
      subscriptionType: 'Exclusive',
      handler: (message) => this.onResponse(message),
    });
    let producer: Producer;
    try {
      producer = await this.transport.createProducer(this.requestTopic, { awaitSubscriber: true, replies: consumer });
    } catch (err) {
      await consumer.close({ unsubscribe: true }).catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      await Promise.all([consumer.close({ unsubscribe: true }), producer.close()]).catch(() => undefined);
      throw new TransportClosedError(`request client for ${this.requestTopic}`);
    }
    this.consumer = consumer;
    this.producer = producer;
  }

  private async publish(id: string, payload: Buffer): Promise<void> {
    const producer = this.producer;
    if (!producer || this.closed) throw new TransportClosedError(`request client for ${this.requestTopic}`);
    await producer.send({ payload, properties: { id } });
  }

  /** Acks everything; decodes only responses somebody here is waiting for. */
  private async onResponse(message: IncomingMessage): Promise<void> {
    const id = message.properties.id;
    const waiter = id === undefined ? undefined : this.waiters.get(id);
    if (!waiter) {
      this.logger.trace({ id }, 'response for another caller: ignored');
    } else {
      let response: Res | undefined;
      let failure: WireDecodeError | undefined;
      try {
        response = this.responseCodec.decode(message.payload);
      } catch (err) {
        failure =
          err instanceof WireDecodeError
            ? err
            : new WireDecodeError(this.responseCodec.name, errorMessage(err), {
                cause: err,
              });
        this.logger.warn({ id, err: failure.message }, 'undecodable response: failing the request');
      }
      if (failure) waiter.fail(failure);
      else waiter.onResponse(response as Res);
    }
    await message.ack().catch((err: unknown) => this.logger.debug({ err }, 'ack failed'));
  }
}
