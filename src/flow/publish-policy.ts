/**
 * How a flow publishes: a failed publish is retried while the broker is unreachable, for a bounded time,
 * and a `next` message waits until the broker connection is whole (its non-persistent topic drops it
 * otherwise).
 */
import type { Logger } from 'pino';
import { TransportError } from '../bus/errors.js';
import type { OutgoingMessage, Producer, Transport } from '../bus/transport.js';
import { whenConnected } from '../bus/when-connected.js';

/** Default of `FlowRuntimeDeps.publishRetryMs`. */
export const DEFAULT_PUBLISH_RETRY_MS = 60_000;
/** The transports' code for "never written: sending again cannot duplicate it" (websocket-transport.ts). */
const NOT_CONNECTED = 'TG_TRANSPORT_NOT_CONNECTED';

export class PublishPolicy {
  constructor(
    private readonly transport: Transport,
    /** How long a publish is retried, and how long `whenConnected` waits. */
    private readonly retryMs: number,
    private readonly logger: Logger,
  ) {}

  /**
   * Publish, retrying while the broker is unreachable (bounded by `retryMs`). With `onlyIfUnsent`, only
   * failures where the message was certainly never written are retried, so a retry cannot publish it twice.
   */
  async publish(producer: Producer, message: OutgoingMessage, onlyIfUnsent: boolean): Promise<void> {
    const deadline = Date.now() + this.retryMs;
    for (let attempt = 1; ; attempt++) {
      try {
        await producer.send(message);
        return;
      } catch (error) {
        const retriable =
          error instanceof TransportError && error.retriable && (!onlyIfUnsent || error.code === NOT_CONNECTED);
        const left = deadline - Date.now();
        if (!retriable || left <= 0) throw error;
        const delay = Math.min(left, 5000, 250 * 2 ** Math.min(attempt - 1, 10));
        this.logger.warn({ err: error, topic: producer.topic, attempt, delayMs: delay }, 'Publish failed; retrying');
        await sleep(delay);
      }
    }
  }

  /**
   * A `next` message goes to a non-persistent topic, which drops it unless a subscription exists: hand it over
   * only while the transport is whole (our own request consumer subscribed), waiting up to `retryMs`.
   */
  whenConnected(): Promise<void> {
    return whenConnected(this.transport, this.retryMs, 'cannot hand the conversation over to its next iteration');
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
