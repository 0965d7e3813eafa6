/**
 * The Kafka transport's idempotent producer, replaced by a fresh one after a send fails, and each send bounded in
 * time.
 *
 * An idempotent producer numbers the batches it writes to each partition, and the broker drops a batch whose numbers
 * it has written already: a batch sent again to a new leader after the old one died is stored once. But when a
 * produce request fails, kafkajs takes its batch's numbers back, although the broker may have written it (its answer
 * lost with the connection, or the retries spent before the cluster elected a new leader). The next batch then
 * reuses those numbers, and the broker either refuses it as out of order (`OUT_OF_ORDER_SEQUENCE_NUMBER`, and every
 * batch after it, for good: kafkajs never starts a new sequence) or, when it has as many records as the batch it
 * wrote, takes it for that batch's copy and drops it without a word. So after a failed send the producer's
 * numbering cannot be trusted: later sends go through a fresh producer, whose new producer id starts its numbers
 * again at 0 whatever the broker holds. The failed send itself ends with `UnacknowledgedSendError` (it may or may
 * not have been written), as a send on any other transport whose outcome is unknown does. kafkajs's retries
 * (kafka-transport.ts) outlast a leader election; a send is still bounded by the transport's send timeout.
 */
import type { Logger } from 'pino';
import type { Producer as KafkaProducer, ProducerBatch } from 'kafkajs';
import { errorMessage } from '../../errors/index.js';
import { NotConnectedError, UnacknowledgedSendError } from '../errors.js';

/** What the renewable producer needs of a kafkajs producer. */
export type BatchProducer = Pick<KafkaProducer, 'connect' | 'disconnect' | 'sendBatch'>;

export class RenewableProducer {
  private producer: BatchProducer;
  /** The current producer's connection, once asked for. */
  private connecting: Promise<void> | undefined;
  /** Producers replaced while a send of theirs was still running: disconnected once it ends, or at close. */
  private readonly retired = new Set<BatchProducer>();
  /** How many producers replaced the first one. */
  renewals = 0;

  constructor(
    private readonly make: () => BatchProducer,
    private readonly timeoutMs: number,
    private readonly logger: Logger,
  ) {
    this.producer = make();
  }

  /** Connects the current producer (for an idempotent one, asks the broker for its producer id). */
  connect(): Promise<void> {
    const producer = this.producer;
    this.connecting ??= producer.connect().catch((err: unknown) => {
      if (this.producer === producer) this.connecting = undefined;
      throw err;
    });
    return this.connecting;
  }

  /**
   * Sends the batch; fails with `UnacknowledgedSendError` when kafkajs gives up on it or it is not acknowledged
   * within the timeout (kafkajs's own retries may outlast it), and then replaces the producer.
   */
  async sendBatch(batch: ProducerBatch): Promise<void> {
    await this.connect().catch((err: unknown) => {
      throw new NotConnectedError(`the Kafka producer cannot connect (${errorMessage(err)}); nothing was sent`);
    });
    const producer = this.producer;
    const sent = producer.sendBatch(batch);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), this.timeoutMs)));
    let failure: string;
    try {
      if ((await Promise.race([sent, late])) !== 'late') return;
      failure = `not acknowledged within ${this.timeoutMs} ms`;
      this.renew(producer, sent, failure);
    } catch (err) {
      failure = errorMessage(err);
      this.renew(producer, sent, failure);
      throw this.unacknowledged(failure, err);
    } finally {
      clearTimeout(timer);
    }
    throw this.unacknowledged(failure);
  }

  private unacknowledged(failure: string, cause?: unknown): UnacknowledgedSendError {
    return new UnacknowledgedSendError(
      `Kafka did not acknowledge the batch (${failure}): it may or may not have been written; later sends go through a new idempotent producer`,
      { cause },
    );
  }

  async disconnect(): Promise<void> {
    await Promise.allSettled([this.producer.disconnect(), ...[...this.retired].map((p) => p.disconnect())]);
  }

  private renew(failed: BatchProducer, sent: Promise<unknown>, failure: string): void {
    if (this.producer !== failed) return;
    this.producer = this.make();
    this.connecting = undefined;
    this.renewals += 1;
    this.logger.warn({ failure }, 'Kafka send failed: a new idempotent producer takes the next sends (a new producer id)');
    // kafkajs may still be retrying the send, and reconnects its client to do so: the producer goes once that ends.
    this.retired.add(failed);
    void sent
      .catch(() => undefined)
      .finally(() => {
        this.retired.delete(failed);
        void failed.disconnect().catch(() => undefined);
      });
  }
}
