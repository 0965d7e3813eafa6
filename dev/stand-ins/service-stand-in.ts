/**
 * A generic stand-in for one TrustGraph request/response service, on the real broker and in the real wire
 * format (docs/trustgraph-wire-notes.md §1.4–1.8): a Shared subscription on the service's request topic, replies published on its
 * response topic, each carrying the request's `id` property. Every decoded request is recorded so tests can
 * assert what the agent sent; a request that cannot be decoded is recorded as a decode failure (no reply).
 *
 * `handle` returns one reply, a list of replies (sent in order), or an async iterable (a stream). It may
 * also publish raw bytes itself through `ctx.sendRaw` (garbage replies for malformed-input tests) and return
 * `[]`. A handler that throws is recorded; with `errorReply` set, the error is answered as the real services
 * do (an error record with the service's end flag), otherwise nothing is sent.
 */
import { randomBytes } from 'node:crypto';
import { queueToTopic } from '../../src/bus/topics.js';
import type { Consumer, IncomingMessage, Producer, Properties, Transport } from '../../src/bus/transport.js';
import type { Codec } from '../../src/wire/index.js';
import { errorMessage } from '../../src/errors/error-text.js';

export interface StandInContext {
  /** The request's `id` property (undefined when it had none). */
  readonly id: string | undefined;
  readonly properties: Properties;
  readonly message: IncomingMessage;
  /** Publish raw bytes on the response topic; the request's `id` is added unless `properties` names one. */
  sendRaw(payload: Buffer | string, properties?: Properties): Promise<void>;
}

export type StandInReply<Res> = Res | Res[] | undefined;
export type StandInHandler<Req, Res> = (
  request: Req,
  ctx: StandInContext,
) => Promise<StandInReply<Res>> | StandInReply<Res> | AsyncIterable<Res>;

export interface StandInOptions<Req, Res> {
  transport: Transport;
  /** TrustGraph queue id (`request:tg:prompt-rag:ws:flow`) or full Pulsar topic. */
  requestQueue: string;
  responseQueue: string;
  requestCodec: Codec<Req>;
  responseCodec: Codec<Res>;
  /** Shared subscription on the request topic. Default `stand-in-<random>`. */
  subscription?: string;
  handle: StandInHandler<Req, Res>;
  /** How a thrown handler error is answered; without it nothing is sent. */
  errorReply?: (message: string, request: Req) => Res;
  /** A name for error messages. Default: the request codec's name. */
  name?: string;
}

export interface RecordedRequest<Req> {
  readonly request: Req;
  readonly properties: Properties;
  readonly payload: Buffer;
}

export interface DecodeFailure {
  readonly payload: Buffer;
  readonly properties: Properties;
  readonly error: string;
}

export interface HandlerFailure<Req> {
  /** Undefined when publishing the reply failed after the handler returned. */
  readonly request: Req | undefined;
  readonly error: string;
}

export interface ServiceStandIn<Req, Res> {
  readonly name: string;
  readonly requestTopic: string;
  readonly responseTopic: string;
  /** Every decoded request, in arrival order. */
  readonly calls: Req[];
  /** The same, with properties and raw payload. */
  readonly received: RecordedRequest<Req>[];
  readonly decodeFailures: DecodeFailure[];
  readonly handlerFailures: HandlerFailure<Req>[];
  /** Every reply published (decoded form), in order. */
  readonly replies: Res[];
  /** When false, requests are still recorded (and acknowledged) but not answered. Default true. */
  available: boolean;
  /** Replace the handler. */
  handle: StandInHandler<Req, Res>;
  /** Resolves once `calls.length >= count`; rejects after `timeoutMs` naming what arrived. */
  waitForCalls(count: number, timeoutMs?: number): Promise<Req[]>;
  /** Publish a reply the stand-in was not asked for (e.g. for an unknown id). */
  publish(response: Res, properties: Properties): Promise<void>;
  publishRaw(payload: Buffer | string, properties: Properties): Promise<void>;
  stop(): Promise<void>;
}

function isAsyncIterable<T>(value: unknown): value is AsyncIterable<T> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

export async function startStandIn<Req, Res>(options: StandInOptions<Req, Res>): Promise<ServiceStandIn<Req, Res>> {
  const { transport, requestCodec, responseCodec } = options;
  const requestTopic = queueToTopic(options.requestQueue);
  const responseTopic = queueToTopic(options.responseQueue);
  const name = options.name ?? requestCodec.name;
  const waiters = new Set<() => void>();
  const producer: Producer = await transport.createProducer(responseTopic);
  let consumer: Consumer | undefined;
  let stopped = false;

  const sendPayload = async (payload: Buffer, properties: Properties): Promise<void> => {
    if (stopped) return;
    await producer.send({ payload, properties });
  };

  const standIn: ServiceStandIn<Req, Res> = {
    name,
    requestTopic,
    responseTopic,
    calls: [],
    received: [],
    decodeFailures: [],
    handlerFailures: [],
    replies: [],
    available: true,
    handle: options.handle,
    waitForCalls(count, timeoutMs = 10_000) {
      if (standIn.calls.length >= count) return Promise.resolve(standIn.calls);
      return new Promise<Req[]>((resolve, reject) => {
        const check = (): void => {
          if (standIn.calls.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(standIn.calls);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `${name} stand-in on ${requestTopic}: expected ${count} request(s) within ${timeoutMs} ms, ` +
                `got ${standIn.calls.length} (decode failures: ${standIn.decodeFailures.length})`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
      });
    },
    async publish(response, properties) {
      standIn.replies.push(response);
      await sendPayload(responseCodec.encode(response), properties);
    },
    async publishRaw(payload, properties) {
      await sendPayload(typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload, properties);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await Promise.allSettled([consumer?.close({ unsubscribe: true }), producer.close()]);
    },
  };

  const answer = async (message: IncomingMessage): Promise<void> => {
    const id = message.properties.id;
    const reply: Properties = id === undefined ? {} : { id };
    let request: Req;
    try {
      request = requestCodec.decode(message.payload);
    } catch (error) {
      standIn.decodeFailures.push({ payload: message.payload, properties: message.properties, error: errorMessage(error) });
      return;
    }
    standIn.calls.push(request);
    standIn.received.push({ request, properties: message.properties, payload: message.payload });
    for (const waiter of [...waiters]) waiter();
    if (!standIn.available) return;

    const ctx: StandInContext = {
      id,
      properties: message.properties,
      message,
      sendRaw: (payload, properties) =>
        standIn.publishRaw(payload, { ...reply, ...(properties ?? {}) }),
    };
    try {
      const result = standIn.handle(request, ctx);
      if (isAsyncIterable<Res>(result)) {
        for await (const response of result) await standIn.publish(response, reply);
        return;
      }
      const value = await result;
      if (value === undefined) return;
      for (const response of Array.isArray(value) ? value : [value]) await standIn.publish(response, reply);
    } catch (error) {
      standIn.handlerFailures.push({ request, error: errorMessage(error) });
      if (options.errorReply) await standIn.publish(options.errorReply(errorMessage(error), request), reply);
    }
  };

  try {
    consumer = await transport.subscribe({
      topic: requestTopic,
      subscription: options.subscription ?? `stand-in-${randomBytes(6).toString('hex')}`,
      subscriptionType: 'Shared',
      handler: async (message) => {
        await message.ack();
        await answer(message).catch((error: unknown) => {
          // Publishing failed (e.g. the stand-in is stopping): keep it visible to the test, never crash.
          standIn.handlerFailures.push({ request: undefined, error: `publish failed: ${errorMessage(error)}` });
        });
      },
    });
  } catch (error) {
    await producer.close().catch(() => undefined);
    throw error;
  }
  return standIn;
}

/** JSON-decode a string, or keep the string when it is not JSON (terms, parameters, config values). */
export function jsonOrString(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** A ready-made `error` record. */
export interface ErrorSpec {
  type: string;
  message: string;
}

/** Replies a stand-in can be scripted to give besides its normal result. */
export type SpecialReply = { error: ErrorSpec } | { raw: string | Buffer };

export function isErrorReply(value: unknown): value is { error: ErrorSpec } {
  return typeof value === 'object' && value !== null && 'error' in value;
}

export function isRawReply(value: unknown): value is { raw: string | Buffer } {
  return typeof value === 'object' && value !== null && 'raw' in value;
}

/**
 * A scripted reply answered as the stand-in's service would: raw bytes are published as they are (and nothing
 * else), an error record becomes `build.error(record)`, any other reply `build.value(reply)`.
 */
export async function answerScripted<T, Res>(
  reply: T,
  ctx: StandInContext,
  build: { error(error: ErrorSpec): StandInReply<Res>; value(value: Exclude<T, SpecialReply>): StandInReply<Res> },
): Promise<StandInReply<Res>> {
  if (isRawReply(reply)) {
    await ctx.sendRaw(reply.raw);
    return [];
  }
  if (isErrorReply(reply)) return build.error(reply.error);
  return build.value(reply as Exclude<T, SpecialReply>);
}

/**
 * The handle a test holds on a stand-in: `fixed` (the bus, its calls, ...), `stop`, and each entry of `script`
 * as a property that reads and replaces it, so a test can swap an answer while the stand-in runs.
 */
export function scriptedHandle<S extends object, F extends object>(
  bus: { stop(): Promise<void> },
  script: S,
  fixed: F,
): F & S & { stop(): Promise<void> } {
  const handle = { ...fixed, stop: () => bus.stop() };
  for (const key of Object.keys(script) as (keyof S & string)[]) {
    Object.defineProperty(handle, key, {
      enumerable: true,
      get: () => script[key],
      set: (value: S[typeof key]) => {
        script[key] = value;
      },
    });
  }
  return handle as F & S & { stop(): Promise<void> };
}
