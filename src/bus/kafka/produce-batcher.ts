/**
 * The Kafka transport's publishes go out in batches: one `sendBatch`, so one produce request and one socket
 * write, for everything published since the last batch left, instead of a request each (kafkajs sends one
 * request per `send`). This is the batching of Kafka's own clients without their linger: nothing waits for a
 * timer. A batch leaves at the end of the event loop's turn, or, while the one before is still in flight, as
 * soon as that one is answered; one batch is in flight at a time, so the broker stores the messages in the
 * order they were published (kafkajs does not keep the order of concurrent sends). Under load the batches
 * grow by themselves: at 64 conversations in flight the agent publishes several messages per turn.
 *
 * Each topic's messages in one batch form one record batch on the broker, and the broker refuses a record
 * batch over its `message.max.bytes`: a topic's share of a batch stays under `maxBatchBytes`, and a message
 * that would take it over starts the next batch.
 */
import type { Message, ProducerBatch, TopicMessages } from 'kafkajs';

interface Pending {
  topic: string;
  message: Message;
  resolve(): void;
  reject(error: unknown): void;
}

export interface ProduceBatcherOptions {
  /** The most bytes of one topic's records in one batch (keys, values, headers and each record's own fields). */
  maxBatchBytes: number;
  /** How long the broker may take to acknowledge a batch. */
  timeoutMs: number;
}

export class ProduceBatcher {
  /** Batches not sent yet, in order; the first one fills while the one before is in flight. */
  private readonly queue: Pending[][] = [];
  /** Bytes of each topic's messages in the last batch of `queue`. */
  private topicBytes = new Map<string, number>();
  private scheduled = false;
  /** The batch sent and not acknowledged yet. */
  private inFlight: Promise<void> | undefined;

  constructor(
    private readonly producer: { sendBatch(batch: ProducerBatch): Promise<unknown> },
    private readonly options: ProduceBatcherOptions,
  ) {}

  /** Resolves once the broker has the message (every in-sync replica: acks=-1). */
  send(topic: string, message: Message): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const bytes = messageBytes(message);
      const queued = this.topicBytes.get(topic) ?? 0;
      let last = this.queue.at(-1);
      if (!last || (queued > 0 && queued + bytes > this.options.maxBatchBytes)) {
        this.queue.push((last = []));
        this.topicBytes = new Map();
      }
      last.push({ topic, message, resolve, reject });
      this.topicBytes.set(topic, (this.topicBytes.get(topic) ?? 0) + bytes);
      if (!this.scheduled && !this.inFlight) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.next();
        });
      }
    });
  }

  /** Waits for everything queued so far to be acknowledged or refused. */
  async drain(): Promise<void> {
    while (this.inFlight || this.queue.length > 0) {
      if (!this.inFlight) this.next();
      await this.inFlight;
    }
  }

  /** Sends the first batch in the queue, unless one is in flight; the next follows once it is answered. */
  private next(): void {
    if (this.inFlight) return;
    const batch = this.queue.shift();
    if (!batch) return;
    if (this.queue.length === 0) this.topicBytes = new Map();
    const byTopic = new Map<string, Message[]>();
    for (const { topic, message } of batch) {
      const messages = byTopic.get(topic);
      if (messages) messages.push(message);
      else byTopic.set(topic, [message]);
    }
    const topicMessages: TopicMessages[] = [...byTopic].map(([topic, messages]) => ({ topic, messages }));
    // Every in-sync replica, on every topic: with acks=1 (TrustGraph's on all but `flow` topics) a message the
    // leader took and had not yet copied is gone when that leader dies, and a cluster elects a new one every day.
    this.inFlight = this.producer
      .sendBatch({ topicMessages, acks: -1, timeout: this.options.timeoutMs })
      .then(
        () => {
          for (const p of batch) p.resolve();
        },
        (error: unknown) => {
          for (const p of batch) p.reject(error);
        },
      )
      .finally(() => {
        this.inFlight = undefined;
        this.next();
      });
  }
}

/**
 * The most a record adds to its record batch besides its key, value and headers (its length, attributes,
 * timestamp and offset deltas, and the lengths of its key, value and header count, each a varint of up to 5
 * or 10 bytes), and what each header adds besides its name and value (two lengths).
 */
const RECORD_OVERHEAD_BYTES = 40;
const HEADER_OVERHEAD_BYTES = 10;

/** What a message takes in a record batch, at most. */
function messageBytes(message: Message): number {
  let bytes = RECORD_OVERHEAD_BYTES + byteLength(message.value) + byteLength(message.key);
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    bytes += HEADER_OVERHEAD_BYTES + Buffer.byteLength(name);
    for (const one of Array.isArray(value) ? value : [value]) bytes += byteLength(one);
  }
  return bytes;
}

function byteLength(value: string | Buffer | null | undefined): number {
  if (value === null || value === undefined) return 0;
  return typeof value === 'string' ? Buffer.byteLength(value) : value.length;
}
