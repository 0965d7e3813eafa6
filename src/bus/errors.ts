/**
 * Errors raised by transports and the request client. The class says what to do: `retriable` is true when
 * the same operation may succeed if tried again later (a lost connection, a busy subscription, a broker
 * timeout), false when trying again cannot help (a bad topic name, no permission, a message too large).
 * Each class carries a stable `code` that users can search for (docs/errors.md).
 */
import { CodedError } from '../errors/index.js';

export interface TransportErrorOptions {
  retriable: boolean;
  cause?: unknown;
}

export class TransportError extends CodedError {
  override readonly name: string = 'TransportError';
  readonly code: string = 'TG_TRANSPORT';
  /** True when trying the same operation again later may succeed. */
  readonly retriable: boolean;

  constructor(message: string, options: TransportErrorOptions) {
    super(message, { cause: options.cause });
    this.retriable = options.retriable;
  }
}

/** A queue id or Pulsar topic name that cannot be mapped. */
export class TopicError extends CodedError {
  override readonly name = 'TopicError';
  readonly code = 'TG_TOPIC_INVALID';
}

/** A message that is larger than the transport can carry (the WebSocket API's text frame limit). Not retriable. */
export class FrameTooLargeError extends TransportError {
  override readonly name = 'FrameTooLargeError';
  override readonly code = 'TG_TRANSPORT_FRAME_TOO_LARGE';

  constructor(
    readonly topic: string,
    /** Size of what would go on the wire (WebSocket: the JSON text frame with the base64 payload) in bytes. */
    readonly frameBytes: number,
    /** The limit in bytes. */
    readonly limitBytes: number,
    /** Size of the raw payload in bytes. */
    readonly payloadBytes: number,
    /**
     * Replaces the WebSocket transport's explanation (another transport has another limit); it says what to do,
     * as the default does: the error response carries it to the client as it is.
     */
    explanation?: string,
  ) {
    super(
      explanation ??
        `message for ${topic} is ${frameBytes} bytes as a WebSocket text frame (payload ${payloadBytes} bytes, ` +
          `base64 adds a third), over the ${limitBytes}-byte limit; it was not sent. Keep payloads under about ` +
          `${Math.floor((limitBytes * 3) / 4) - 1024} bytes, or raise webSocketMaxTextFrameSize on the broker and ` +
          `maxFrameBytes in the transport together, or use --transport native (5 MB messages)`,
      { retriable: false },
    );
  }
}

/**
 * The broker refused a publish (`send-error:N`). Codes from Pulsar's ProducerHandler: 3 = the frame was not
 * valid JSON, 7 = bad base64 payload, 8 = the broker could not send it (timeout, full queue; retriable).
 */
export class ProducerSendError extends TransportError {
  override readonly name = 'ProducerSendError';
  override readonly code = 'TG_TRANSPORT_SEND_FAILED';

  constructor(
    readonly topic: string,
    /** The number after `send-error:`, or -1 when the result was something else. */
    readonly sendErrorCode: number,
    readonly brokerMessage: string,
  ) {
    super(`broker refused a message on ${topic} (send-error:${sendErrorCode}): ${brokerMessage}`, {
      retriable: sendErrorCode === 8,
    });
  }
}

/** HTTP statuses on the WebSocket upgrade that may go away by themselves. */
const RETRIABLE_STATUSES = new Set([408, 409, 429, 500, 502, 503, 504]);

/** Whether a failed upgrade with this HTTP status is worth retrying (undefined: no HTTP answer at all). */
export function isRetriableStatus(status: number | undefined): boolean {
  return status === undefined || RETRIABLE_STATUSES.has(status);
}

/**
 * A producer or consumer could not be created: the broker was unreachable (no `status`), or it answered the
 * upgrade with an HTTP error. 400 (bad parameters), 401/403 (authentication, authorization) and 404 (no such
 * tenant, namespace or topic) are not retriable; 409 (producer or consumer busy, e.g. a second consumer on an
 * Exclusive subscription, or the previous session not yet torn down), 429, 5xx and network errors are.
 */
export class ConnectError extends TransportError {
  override readonly name = 'ConnectError';
  override readonly code = 'TG_TRANSPORT_CONNECT_FAILED';

  constructor(
    message: string,
    readonly url: string,
    /** HTTP status of the refused upgrade; undefined when the broker did not answer. */
    readonly status?: number,
    options?: { cause?: unknown; retriable?: boolean },
  ) {
    super(message, { retriable: options?.retriable ?? isRetriableStatus(status), cause: options?.cause });
  }

  /** The topic, namespace or tenant does not exist (HTTP 404, or the binary protocol's "not found"): perhaps not yet. */
  get notFound(): boolean {
    return this.status === 404;
  }
}

/** The broker refused our credentials (or wants some): fix the configuration, do not retry. */
export class CredentialsRefusedError extends TransportError {
  override readonly name = 'CredentialsRefusedError';
  override readonly code = 'TG_TRANSPORT_CREDENTIALS_REFUSED';

  constructor(message: string) {
    super(message, { retriable: false });
  }
}

/** The selected transport cannot run on this machine. Not retriable. */
export class TransportUnavailableError extends TransportError {
  override readonly name = 'TransportUnavailableError';
  override readonly code = 'TG_TRANSPORT_UNAVAILABLE';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { retriable: false, cause: options?.cause });
  }
}

/**
 * `send` gave up waiting for a reconnecting producer. The message was never written to any socket, so
 * sending it again cannot publish it twice (unlike a connection lost after the write, whose error says the
 * message may or may not have been published). Retriable.
 */
export class NotConnectedError extends TransportError {
  override readonly name: string = 'NotConnectedError';
  override readonly code: string = 'TG_TRANSPORT_NOT_CONNECTED';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { retriable: true, cause: options?.cause });
  }
}

/**
 * `send` found no room among a producer's sends in flight (the native client takes at most `limit` at once):
 * it waited up to the send timeout for one and gave up, or the client refused it as full. Never written, so a
 * NotConnectedError: sending it again cannot publish it twice. Retriable.
 */
export class ProducerQueueFullError extends NotConnectedError {
  override readonly name = 'ProducerQueueFullError';
  override readonly code = 'TG_TRANSPORT_PRODUCER_QUEUE_FULL';

  constructor(
    readonly topic: string,
    /** Sends in flight at most on one producer. */
    readonly limit: number,
    /** What happened to this send, e.g. how long it waited. */
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      `send on ${topic} was never written: ${detail}; the producer takes at most ${limit} sends in flight and the ` +
        `broker acknowledged them slower than they came. Sending it again cannot publish it twice`,
      options,
    );
  }
}

/**
 * The connection was lost after a message was written and before the broker acknowledged it: it may or may not
 * have been published. Retriable, for a message that may go out twice.
 */
export class UnacknowledgedSendError extends TransportError {
  override readonly name = 'UnacknowledgedSendError';
  override readonly code = 'TG_TRANSPORT_SEND_UNACKNOWLEDGED';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { retriable: true, cause: options?.cause });
  }
}

/** An operation on a transport, producer, consumer or client that has been closed. Not retriable. */
export class TransportClosedError extends TransportError {
  override readonly name = 'TransportClosedError';
  override readonly code = 'TG_TRANSPORT_CLOSED';

  constructor(what: string) {
    super(`${what} is closed`, { retriable: false });
  }
}

/** No response arrived within the timeout (per message: a stream resets it on each reply). Retriable. */
export class RequestTimeoutError extends TransportError {
  override readonly name: string = 'RequestTimeoutError';
  override readonly code: string = 'TG_REQUEST_TIMEOUT';

  constructor(
    readonly requestTopic: string,
    readonly timeoutMs: number,
    readonly requestId: string,
    /** Replies received for this request before the timeout (streams). */
    readonly received = 0,
    /** Replaces the default text (a subclass's own account of the timeout). */
    explanation?: string,
  ) {
    super(
      explanation ??
        (received === 0
          ? `no response to request ${requestId} on ${requestTopic} within ${timeoutMs} ms`
          : `no further response to request ${requestId} on ${requestTopic} within ${timeoutMs} ms ` +
            `(after ${received} replies)`),
      { retriable: true },
    );
  }
}

/**
 * A request that waited its whole timeout for a slot among the requests in flight to its service (call-slots.ts)
 * and was never sent. A timeout like any other to its caller (the call's timeout counts the wait for a slot),
 * but the service never saw it. Retriable.
 */
export class CallQueueTimeoutError extends RequestTimeoutError {
  override readonly name = 'CallQueueTimeoutError';
  override readonly code = 'TG_REQUEST_QUEUE_TIMEOUT';

  constructor(
    requestTopic: string,
    timeoutMs: number,
    requestId: string,
    readonly queue: { readonly service: string; readonly limit: number; readonly inFlight: number; readonly queued: number; readonly advice: string },
  ) {
    super(
      requestTopic,
      timeoutMs,
      requestId,
      0,
      `request ${requestId} to the ${queue.service} service (${requestTopic}) waited ${timeoutMs} ms for one of the ` +
      `${queue.limit} places in flight and was never sent: ${queue.inFlight} requests were in flight and ${queue.queued} ` +
      `waiting, this one among them. The service answers slower than the agent calls it; ${queue.advice}`,
    );
  }
}

/**
 * A request sent twice (a hedged request, hedged-stream.ts) whose other sending answered first: it stops
 * listening, and a reply of it that comes later is ignored. It never reaches a caller.
 */
export class RequestAbandonedError extends CodedError {
  override readonly name = 'RequestAbandonedError';
  readonly code = 'TG_REQUEST_ABANDONED';

  constructor(
    readonly requestTopic: string,
    readonly requestId: string,
  ) {
    super(`request ${requestId} on ${requestTopic} was sent twice and the other sending answered first; its replies are ignored`);
  }
}

/**
 * The broker connection was lost while a request waited for its response. Responses travel on non-persistent
 * topics, where one published while our subscription was away is gone, so the request is given up as soon as
 * the connection is whole again instead of waiting for its timeout. A request to a service that only reads
 * is sent once more first (RequestClient's `repeatable`); any other is not, since the service may have acted
 * on it. Retriable.
 */
export class ConnectionLostError extends TransportError {
  override readonly name = 'ConnectionLostError';
  override readonly code = 'TG_TRANSPORT_CONNECTION_LOST';

  constructor(
    readonly requestTopic: string,
    readonly requestId: string,
    /** Replies received for this request before the connection was lost (streams). */
    readonly received = 0,
    /** The request was already the second sending of one that was lost the same way. */
    readonly repeated = false,
  ) {
    super(
      `the broker connection was lost while request ${requestId} on ${requestTopic} waited for its ` +
        `${received === 0 ? 'response' : `next response (after ${received} replies)`}; a response published ` +
        `meanwhile is gone, so the request was given up once the connection was back ` +
        `(${repeated ? 'it was already sent a second time after an earlier loss' : 'it was not sent again'})`,
      { retriable: true },
    );
  }
}

/**
 * Why a request may have been lost before any of its answer came, with the broker connection: its reply while
 * it waited (once; a request sent a second time is not sent a third), or the request itself before the broker
 * acknowledged it. Undefined for any other failure.
 */
export function lostBeforeAnswer(error: unknown): string | undefined {
  if (error instanceof ConnectionLostError && error.received === 0 && !error.repeated) return 'Broker connection was lost while a request waited';
  if (error instanceof UnacknowledgedSendError) return 'Broker connection was lost before it acknowledged a request';
  return undefined;
}

/** The broker's admin API refused a request or did not answer it with what was asked for. */
export class AdminApiError extends CodedError {
  override readonly name = 'AdminApiError';
  readonly code = 'TG_BROKER_ADMIN_API';
}
