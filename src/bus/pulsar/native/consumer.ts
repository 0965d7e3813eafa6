/**
 * One consumer of the native transport, whose C++ consumer can be replaced by a new subscription: the transport
 * does so when it stays disconnected while the broker answers (stuck-watch.ts).
 *
 * Why: the C++ client stops reconnecting a consumer or producer in some cases (its creation timer cancels
 * the pending reconnection, stuck-watch.ts), and nothing in the binding says so; a consumer that is
 * never back would leave its topic unread and `/readyz` not ready for good.
 */
import type { Logger } from 'pino';
import { createUntilUp } from './create-until-up.js';
import type { NativeConsumer } from './pulsar-client-module.js';
import { LinkState } from './link-state.js';

export interface NativeConsumerParts {
  topic: string;
  subscription: string;
  /** Subscribes a C++ consumer whose listener delivers to the subscriber's handler (the broker must answer). */
  subscribe(): Promise<NativeConsumer>;
  /** How long one attempt to subscribe again may take (create-until-up.ts). */
  attemptTimeoutMs: number;
  logger: Logger;
}

export class RecyclingNativeConsumer {
  readonly name: string;
  /** Its connection, as the publishes that need it (a call's, on its reply subscription) wait for it. */
  readonly link: LinkState;
  /** The C++ consumer in use; undefined while a new one is being subscribed. */
  private live: NativeConsumer | undefined;
  /** The replacement under way, if any. */
  private replacing: Promise<void> | undefined;
  private closed = false;
  private readonly closing = new AbortController();

  private constructor(
    private readonly parts: NativeConsumerParts,
    first: NativeConsumer,
  ) {
    this.name = `consumer of ${parts.topic} as ${parts.subscription}`;
    this.live = first;
    this.link = new LinkState(this.name, () => this.live?.isConnected() ?? false);
  }

  static async open(parts: NativeConsumerParts): Promise<RecyclingNativeConsumer> {
    return new RecyclingNativeConsumer(parts, await parts.subscribe());
  }

  isConnected(): boolean {
    return this.link.up();
  }

  /** Closes the C++ consumer and subscribes a new one; a consumer already being replaced is left to it. */
  replace(): void {
    const old = this.live;
    if (this.closed || !old) return;
    this.live = undefined;
    const { logger, topic, subscription } = this.parts;
    this.replacing = (async () => {
      await old.close().catch((err: unknown) => logger.debug({ err, topic, subscription }, 'closing a consumer the client gave up on failed'));
      this.live = await createUntilUp({
        create: () => this.parts.subscribe(),
        dispose: (late) => late.close(),
        attemptTimeoutMs: this.parts.attemptTimeoutMs,
        signal: this.closing.signal,
        what: this.name,
        logger,
      });
      logger.info({ topic, subscription }, 'Subscribed again in place of a consumer that did not reconnect');
    })().catch(() => undefined);
  }

  async close(options?: { unsubscribe?: boolean }): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closing.abort();
    await this.replacing;
    const native = this.live;
    this.live = undefined;
    if (!native) return;
    const { logger, topic, subscription } = this.parts;
    if (options?.unsubscribe) await native.unsubscribe().catch((err: unknown) => logger.debug({ err, topic, subscription }, 'unsubscribe failed'));
    await native.close().catch((err: unknown) => logger.debug({ err, topic, subscription }, 'close failed'));
  }
}
