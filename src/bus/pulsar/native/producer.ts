/**
 * One producer of the native transport, whose C++ producer is replaced when its broker connection drops while
 * sends are in flight.
 *
 * Why: the C++ client keeps every message it has not had a receipt for, and writes them all the instant it
 * reconnects, before the subscribers of the topic (the gateway, the services, other agents) are back; a
 * non-persistent topic drops them, and nothing says so. Closing the C++ producer fails those sends instead
 * (`AlreadyClosed`), so the publish policy sends them again on a new producer, after the settle
 * (connection-status.ts) that gives the subscribers time to come back. A message the broker took just before
 * it died may then arrive twice, which is why a final message is "at least once" during a broker fault.
 *
 * The C++ producer holds at most `maxPendingSends` sends without a receipt and fails any send beyond that at
 * once (`ProducerQueueIsFull`); its `blockIfQueueFull` would block the calling thread, which is the event loop.
 * So a send takes one of `maxPendingSends` places here first and waits for one, in order, when all are taken:
 * a burst of thousands of publishes on one topic (conversations in flight on one replica) goes out as the
 * broker acknowledges, and a send that finds no place within the send timeout fails as never written.
 */
import type { Logger } from 'pino';
import { errorMessage } from '../../../errors/index.js';
import type { ConnectionStatus, PublishLink } from '../../connection-status.js';
import { CallSlots, type SlotTicket } from '../../call-slots.js';
import {
  FrameTooLargeError,
  NotConnectedError,
  ProducerQueueFullError,
  TransportClosedError,
  TransportError,
  UnacknowledgedSendError,
} from '../../errors.js';
import { createUntilUp } from './create-until-up.js';
import type { OutgoingMessage, Producer } from '../../transport.js';
import type { NativeProducer } from './pulsar-client-module.js';
import { LinkState } from './link-state.js';

export interface NativeProducerParts {
  topic: string;
  /** Creates the C++ producer (the broker must answer). */
  create(): Promise<NativeProducer>;
  /** How long one attempt to create it again may take (create-until-up.ts). */
  attemptTimeoutMs: number;
  connection: ConnectionStatus;
  /**
   * The other links its publishes need: a call's reply subscription. A publish waits for its own producer and
   * these to be up and settled, not for the whole transport (connection-status.ts).
   */
  alsoNeeds?: readonly PublishLink[];
  /** After a reconnect, wait for the topic to have a subscriber (connection-status.ts). */
  awaitSubscriber: boolean;
  sendTimeoutMs: number;
  /** The C++ producer's `maxPendingMessages`: sends handed to it at once at most; the others wait here. */
  maxPendingSends: number;
  maxMessageBytes: number;
  tooLarge(topic: string, size: number): FrameTooLargeError;
  logger: Logger;
}

export class RecyclingNativeProducer implements Producer {
  readonly topic: string;
  readonly name: string;
  /** Its own connection, as its publishes wait for it. */
  readonly link: LinkState;
  private current: Promise<NativeProducer>;
  /** The C++ producer in use; undefined while a new one is being created. */
  private live: NativeProducer | undefined;
  private inFlight = 0;
  /** The places among the sends the C++ producer holds (see above). */
  private readonly room: CallSlots;
  private closed = false;
  /** Aborted by `close`: ends the creation of a replacement at once. */
  private readonly closing = new AbortController();

  private constructor(
    private readonly parts: NativeProducerParts,
    first: NativeProducer,
  ) {
    this.topic = parts.topic;
    this.name = `producer for ${parts.topic}`;
    this.current = Promise.resolve(first);
    this.live = first;
    this.link = new LinkState(this.name, () => this.live?.isConnected() ?? false);
    this.room = new CallSlots({ limit: parts.maxPendingSends, service: this.name, advice: 'its sends wait for a receipt of the broker' });
  }

  static async open(parts: NativeProducerParts): Promise<RecyclingNativeProducer> {
    return new RecyclingNativeProducer(parts, await parts.create());
  }

  async send(message: OutgoingMessage): Promise<void> {
    const { topic, connection, sendTimeoutMs } = this.parts;
    if (this.closed) throw new TransportClosedError(`producer for ${topic}`);
    const startedAt = performance.now();
    const size = message.payload.length;
    if (size > this.parts.maxMessageBytes) throw this.parts.tooLarge(topic, size);
    // A send made during an outage would wait in the C++ client too (see above): it is not handed over until
    // the links it needs are up and settled, and fails as never written if that takes longer than the timeout.
    const links = [this.link, ...(this.parts.alsoNeeds ?? [])];
    if (!(await connection.settled(sendTimeoutMs, this.parts.awaitSubscriber ? topic : undefined, links))) {
      const down = links.filter((link) => !link.up()).map((link) => link.name);
      throw new NotConnectedError(`producer for ${topic} is not connected after ${sendTimeoutMs} ms (${down.length > 0 ? `reconnecting: ${down.join('; ')}` : 'reconnecting'})`);
    }
    const place = await this.placeInFlight(sendTimeoutMs - (performance.now() - startedAt));
    try {
      const native = await this.current;
      this.inFlight++;
      try {
        await native.send({
          discardMessageId: true,
          data: message.payload,
          properties: message.properties ?? {},
          ...(message.key !== undefined ? { partitionKey: message.key } : {}),
        });
      } catch (err) {
        const text = errorMessage(err);
        if (/MessageTooBig/i.test(text)) throw this.parts.tooLarge(topic, size);
        // Refused before it was written: the C++ client's queue or its memory for pending messages was full.
        if (/ProducerQueueIsFull|MemoryBufferIsFull/i.test(text)) {
          throw new ProducerQueueFullError(topic, this.room.limit, `the Pulsar client refused it (${text})`, { cause: err });
        }
        if (/AlreadyClosed/i.test(text) && !this.closed) {
          throw new UnacknowledgedSendError(`send on ${topic} failed: the broker connection was lost before it acknowledged the message, which may or may not have been published`, { cause: err });
        }
        throw new TransportError(`send on ${topic} failed: ${text}`, { retriable: true, cause: err });
      } finally {
        this.inFlight--;
      }
    } finally {
      place.release();
    }
  }

  /**
   * One of the places among the sends in flight, at once or when an earlier send ends; a send that gets none
   * within `waitMs` (what is left of its send timeout) fails as never written.
   */
  private async placeInFlight(waitMs: number): Promise<SlotTicket> {
    let granted!: () => void;
    const turn = new Promise<true>((resolve) => (granted = () => resolve(true)));
    const place = this.room.enter(() => granted());
    if (place.held) return place;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, waitMs))));
    await Promise.race([turn, timedOut]);
    clearTimeout(timer);
    if (place.held) return place;
    place.release();
    const { topic, sendTimeoutMs } = this.parts;
    throw new ProducerQueueFullError(topic, this.room.limit, `it found no place within the send timeout (${sendTimeoutMs} ms; ${this.room.queued} more sends wait)`);
  }

  /**
   * Whether the C++ producer is connected: false while it reconnects, or while a new one is being created. The
   * transport's status sampler asks every producer; one found cut off with sends in flight is replaced then.
   * Only a producer cut off itself is: a broker stopping cleanly unloads its topics one by one, and a producer
   * whose connection still stands gets the receipts of its sends, which failing them would publish twice.
   */
  sampleConnection(): boolean {
    const connected = this.link.up();
    if (!connected && this.live && this.inFlight > 0 && !this.closed) {
      this.parts.logger.info({ topic: this.topic }, 'Replacing a producer cut off with sends in flight; they are sent again once the broker is back');
      this.replace();
    }
    return connected;
  }

  /**
   * Closes the C++ producer, failing its unacknowledged sends, and creates a new one for the sends to come. The
   * transport also calls it for a producer that stays down while the broker answers (stuck-watch.ts).
   * A producer already being replaced is left to it.
   */
  replace(): void {
    if (this.closed || !this.live) return;
    // Not connected from now on, so the sampler does not replace it twice.
    this.live = undefined;
    const previous = this.current;
    this.current = (async () => {
      const old = await previous;
      await old.close().catch((err: unknown) => this.parts.logger.debug({ err, topic: this.topic }, 'closing a producer cut off by the broker failed'));
      const native = await createUntilUp({
        create: () => this.parts.create(),
        dispose: (late) => late.close(),
        attemptTimeoutMs: this.parts.attemptTimeoutMs,
        signal: this.closing.signal,
        what: this.name,
        logger: this.parts.logger,
      });
      this.live = native;
      return native;
    })();
    // A send awaits it and gets its failure; this line only keeps an unwatched failure (a close) quiet.
    this.current.catch(() => undefined);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closing.abort();
    const native = await this.current.catch(() => undefined);
    this.live = undefined;
    await native?.close();
  }
}
