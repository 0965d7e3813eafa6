/**
 * How a flow publishes: a failed publish is retried while the broker is unreachable, for a bounded time,
 * and a `next` message waits until the broker connection is whole (its non-persistent topic drops it
 * otherwise).
 */
import type { Logger } from 'pino';
import { NotConnectedError, type OutgoingMessage, type Producer, type Transport, TransportError, whenConnected } from '../bus/index.js';
import { exponentialBackoff, retry } from '../retry/index.js';

/** Default of `FlowRuntimeDeps.publishRetryMs`. */
export const DEFAULT_PUBLISH_RETRY_MS = 60_000;
/**
 * How long a final message (`end_of_dialog`: the answer, or the error that ends a failed dialog) is retried.
 * Longer than the usual window: an outage that outlasts it should still end the conversation once the broker is
 * back, not leave the gateway waiting for its own timeout (TrustGraph's: 600 s, this figure). Nothing else can
 * get through a broker that is away meanwhile, so the slot it holds costs nothing.
 */
export const FINAL_MESSAGE_RETRY_MS = 600_000;
/** 250 ms doubling to 5 s between publish attempts. */
const PUBLISH_BACKOFF = exponentialBackoff({ initialMs: 250, maxMs: 5000 });

/**
 * Which failed sends of a message are sent again:
 * - `always`: every one the broker may take on a retry (a response: the gateway tolerates a second copy);
 * - `unsent`: only one certainly never written, so a retry cannot publish it twice;
 * - `marked`: also one that may have been written (the broker did not confirm it), sent again with the
 *   `RESENT_PROPERTY` property: the replica that gets it first asks whether one took it already
 *   (flow-runtime.ts, request-claims.ts), as for a broker's redelivery.
 */
export type ResendMode = 'always' | 'unsent' | 'marked';

/** On a message sent again after a send whose outcome is unknown: it may be a second copy. TrustGraph reads only `id`. */
export const RESENT_PROPERTY = 'tg-agent-resent';

export class PublishPolicy {
  constructor(
    private readonly transport: Transport,
    /** How long a publish is retried, and how long `whenConnected` waits. */
    private readonly retryMs: number,
    private readonly logger: Logger,
  ) {}

  /**
   * Publish, retrying while the broker is unreachable (bounded by `retryMs`); `mode` says which failures are
   * retried (`ResendMode`). `windowMs` replaces the policy's retry time (FINAL_MESSAGE_RETRY_MS for a final message).
   */
  async publish(producer: Producer, message: OutgoingMessage, mode: ResendMode, windowMs = this.retryMs): Promise<void> {
    let outgoing = message;
    await retry(() => producer.send(outgoing), {
      backoff: PUBLISH_BACKOFF,
      maxElapsedMs: windowMs,
      retryIf: (error) => {
        if (!(error instanceof TransportError && error.retriable)) return false;
        // NotConnectedError: the message was never written, so sending it again cannot publish it twice.
        if (mode === 'always' || error instanceof NotConnectedError) return true;
        if (mode === 'unsent') return false;
        outgoing = { ...message, properties: { ...message.properties, [RESENT_PROPERTY]: 'true' } };
        return true;
      },
      onRetry: ({ error, attempt, delayMs }) =>
        this.logger.warn({ err: error, topic: producer.topic, attempt, delayMs }, 'Publish failed; retrying'),
    });
  }

  /**
   * A `next` message goes to a non-persistent topic, which drops it unless a subscription exists: hand it over
   * only while the transport is whole (our own request consumer subscribed), waiting up to `retryMs`.
   */
  whenConnected(): Promise<void> {
    return whenConnected(this.transport, this.retryMs, 'cannot hand the conversation over to its next iteration');
  }
}
