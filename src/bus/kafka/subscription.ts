/**
 * One subscription on Kafka: a `kafkajs` consumer in the subscription's consumer group (topology.ts),
 * handing each message to the handler as it comes, without waiting for the one before, as on Pulsar.
 *
 * - Offsets are committed as messages are acknowledged, in order per partition (offsets.ts), never
 *   automatically: an unfinished message is read again by whoever holds its partition next. What is finished
 *   within COMMIT_EVERY_MS goes in one commit.
 * - A negative acknowledgement hands the same message to the handler again after the redelivery delay: Kafka
 *   has no per-message redelivery, and TrustGraph's own consumer would never see it again before a restart.
 * - At `receiverQueueSize` unfinished messages the topic is paused, and resumed below it (flow control).
 * - The subscription is ready once its group is joined and a first fetch has fixed where it reads from: a
 *   group that starts at the latest offset would otherwise miss what is published in the meantime.
 * - Each subscription has a kafkajs client of its own. kafkajs keeps a group's committed offsets in the client,
 *   in one table that every consumer made from that client shares, and a consumer that rejoins its group clears
 *   the table's entries of every topic it was not given. Two consumers of one group in one process (two readers
 *   of one subscription, or one subscription name on several topics) would clear each other's entries in a
 *   rebalance, and the next fetch of the one holding the partition fails on the missing entry with a TypeError
 *   that kafkajs does not retry.
 */
import { randomUUID } from 'node:crypto';
import { Kafka, type Consumer as KafkaConsumer, type ConsumerRunConfig, type KafkaConfig, type KafkaMessage } from 'kafkajs';
import type { Logger } from 'pino';
import { deliver } from '../deliver.js';
import { stickyRoundRobinAssigner } from './assigner.js';
import { PartitionOffsets } from './offsets.js';
import type { KafkaGroup, KafkaTopic } from './topology.js';
import type { IncomingMessage, SubscribeOptions } from '../transport.js';
import { TransportError } from '../errors.js';
import { errorMessage } from '../../errors/index.js';
import { exponentialBackoff, RetryTimer } from '../../retry/index.js';

/**
 * How long an acknowledgement may wait to be committed with the ones after it. A commit per message cost the
 * broker a third of its CPU in `bench:iteration`; a process that dies leaves at most this much more to be read
 * again by the member that takes its partition.
 */
const COMMIT_EVERY_MS = 100;

/** How long a consumer that kafkajs stopped for good waits before it is started again. */
const CONSUMER_RESTART_BACKOFF = exponentialBackoff({ initialMs: 1000, maxMs: 30_000, jitter: 'equal' });

/** What the subscription tells its transport about the state of its link to the broker. */
export interface SubscriptionLink {
  up(key: string): void;
  down(key: string, detail: string): void;
}

/** A partition's offset, as kafkajs writes offsets (decimal strings). */
export interface PartitionOffset {
  partition: number;
  offset: string;
}

export class KafkaSubscription {
  readonly key = `consumer:${randomUUID()}`;
  private readonly consumer: KafkaConsumer;
  private readonly partitions = new Map<number, PartitionOffsets>();
  /** The newest offset taken from each partition this consumer held and was then not given. */
  private readonly takenBefore = new Map<number, number>();
  private paused = false;
  private closed = false;
  private committing: Promise<void> | undefined;
  private commitAgain = false;
  private commitTimer: NodeJS.Timeout | undefined;
  private messageIds = 0;
  /** Starts of a consumer that kafkajs stopped for good (`crashed`). */
  private readonly restarts = new RetryTimer(CONSUMER_RESTART_BACKOFF);

  constructor(
    clientConfig: KafkaConfig,
    private readonly options: SubscribeOptions,
    private readonly where: KafkaTopic,
    readonly group: KafkaGroup,
    private readonly link: SubscriptionLink,
    private readonly logger: Logger,
  ) {
    this.consumer = new Kafka(clientConfig).consumer({
      groupId: group.groupId,
      // The partitions this consumer holds stay with it when the group rebalances (assigner.ts).
      partitionAssigners: [stickyRoundRobinAssigner(() => ({ [where.name]: [...this.partitions.keys()] }))],
      // TrustGraph's consumer settings: a member gone for 6 s loses its partitions.
      sessionTimeout: 6000,
      heartbeatInterval: 1000,
      maxWaitTimeInMs: 500,
      allowAutoTopicCreation: false,
      retry: { initialRetryTime: 100, maxRetryTime: 2000, retries: 5, restartOnFailure: async () => !this.closed },
    });
  }

  /**
   * Joins the group, within `timeoutMs`. `placement`: where a group that has never committed starts; the
   * consumer seeks there on the partitions it is given as it first joins, before its first fetch, and commits it
   * once it runs (kafkajs drops a commit made before), so the group keeps that place even if it closes before
   * reading anything.
   */
  async start(timeoutMs: number, placement: PartitionOffset[] = []): Promise<void> {
    const { consumer } = this;
    let joined = false;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      // Only a partition this member was given: kafkajs keeps a seek on any other until the member is given it,
      // in whatever later generation, and would then read again from the placement.
      const given = new Set(payload.memberAssignment[this.where.name] ?? []);
      if (!joined) for (const { partition, offset } of placement) if (given.has(partition)) consumer.seek({ topic: this.where.name, partition, offset });
      this.forgetPartitionsNotIn(given);
      joined = true;
      this.restarts.succeeded();
      this.link.up(this.key);
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => this.crashed(payload.error, payload.restart));
    const started = (async () => {
      await consumer.connect();
      await consumer.subscribe({ topic: this.where.name, fromBeginning: this.group.fromBeginning });
      // Resolves once the group is joined and the consumer runs.
      await consumer.run(this.runConfig);
      await this.commitPlacement(placement);
    })();
    // Past the timeout the caller has its error; a later failure has nobody to tell.
    started.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new TransportError(`the consumer group ${this.group.groupId} of ${this.where.name} was not joined within ${timeoutMs} ms`, { retriable: true })), timeoutMs);
    });
    try {
      await Promise.race([started, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private readonly runConfig: ConsumerRunConfig = {
    autoCommit: false,
    eachMessage: async ({ partition, message }) => this.received(partition, message),
  };

  /**
   * kafkajs starts a failed consumer again itself only after an error it counts as passing (a broker gone, a
   * request timed out). After any other (a TypeError of its own, a group that refuses our assignor) it leaves the
   * consumer stopped, out of the group, for good: its partitions go to the other members, or to nobody when it
   * was the only one. Such a consumer is started again here, after a backoff, until it joins or is closed.
   */
  private crashed(error: unknown, restartedByKafkajs: boolean): void {
    if (this.closed) return;
    const detail = `Kafka consumer of ${this.where.name} (group ${this.group.groupId}) failed: ${errorMessage(error)}`;
    // kafkajs wraps what failed; the logged stack ends with the original error's ("caused by").
    this.logger.warn({ err: error, restartedByKafkajs }, detail);
    this.link.down(this.key, detail);
    if (restartedByKafkajs) return;
    const delayMs = this.restarts.retryLater(() => {
      if (this.closed) return;
      this.consumer.run(this.runConfig).catch((err: unknown) => this.crashed(err, false));
    });
    if (delayMs !== undefined) this.logger.warn(`Kafka consumer of ${this.where.name} (group ${this.group.groupId}) is started again in ${delayMs} ms`);
  }

  /**
   * A partition the group gave to another member is that member's to commit from now on. Kafka would take an
   * older offset from this consumer too (any member may commit any partition), moving the group back over what
   * the other has read, so what this consumer finishes of it afterwards is not committed; should the partition
   * come back, it is counted afresh from where the group's offset then is, and what this consumer took of it
   * before is handed out marked as delivered again (the flow leaves a request it is running or ran lately).
   */
  private forgetPartitionsNotIn(given: Set<number>): void {
    for (const [partition, offsets] of this.partitions) {
      if (given.has(partition)) continue;
      this.partitions.delete(partition);
      this.takenBefore.set(partition, offsets.newestTaken);
    }
    this.flowControl();
  }

  private async commitPlacement(placement: PartitionOffset[]): Promise<void> {
    if (placement.length === 0) return;
    const offsets = placement.map(({ partition, offset }) => ({ topic: this.where.name, partition, offset }));
    return this.consumer.commitOffsets(offsets).catch((err: unknown) => this.logger.debug({ err, topic: this.where.name }, 'Kafka group placement not committed'));
  }

  async close(deleteGroup: (groupId: string) => Promise<void>, unsubscribe: boolean): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.restarts.stop();
    clearTimeout(this.commitTimer);
    this.commitTimer = undefined;
    await this.committing;
    // What was acknowledged since the last commit is committed before the group is left, or the member that
    // reads the partition next would get it again.
    await this.commitFinished();
    await this.consumer.disconnect().catch((err: unknown) => this.logger.debug({ err }, 'Kafka consumer disconnect failed'));
    if (this.group.private || unsubscribe) await deleteGroup(this.group.groupId);
  }

  private received(partition: number, message: KafkaMessage): void {
    if (this.closed) return;
    let offsets = this.partitions.get(partition);
    if (!offsets) this.partitions.set(partition, (offsets = new PartitionOffsets(this.takenBefore.get(partition))));
    const offset = Number(message.offset);
    if (!offsets.take(offset)) return;
    // Read again after the partition came back: delivered again, as a broker marks a redelivery.
    this.hand(this.incoming(partition, offset, message, offsets.takenBefore(offset) ? 1 : 0));
    this.flowControl();
  }

  private hand(message: IncomingMessage): void {
    deliver(this.options.handler, message, this.logger, { topic: this.options.topic, subscription: this.options.subscription });
  }

  private incoming(partition: number, offset: number, raw: KafkaMessage, redeliveryCount: number): IncomingMessage {
    let settled = false;
    const delayMs = this.options.negativeAckRedeliveryDelayMs ?? 1000;
    return {
      messageId: `${this.where.name}:${partition}:${offset}:${++this.messageIds}`,
      topic: this.options.topic,
      payload: raw.value ?? Buffer.alloc(0),
      properties: stringHeaders(raw.headers),
      redeliveryCount,
      ack: async () => {
        if (settled) return;
        settled = true;
        this.partitions.get(partition)?.finish(offset);
        this.flowControl();
        this.commitSoon();
      },
      nack: async () => {
        if (settled) return;
        settled = true;
        setTimeout(() => {
          if (!this.closed) this.hand(this.incoming(partition, offset, raw, redeliveryCount + 1));
        }, delayMs).unref();
      },
    };
  }

  private flowControl(): void {
    const limit = this.options.receiverQueueSize ?? 1000;
    let held = 0;
    for (const offsets of this.partitions.values()) held += offsets.held;
    const topics = [{ topic: this.where.name }];
    if (!this.paused && held >= limit) {
      this.paused = true;
      this.consumer.pause(topics);
    } else if (this.paused && held < limit) {
      this.paused = false;
      this.consumer.resume(topics);
    }
  }

  /** Commits within COMMIT_EVERY_MS, with whatever else is finished by then. */
  private commitSoon(): void {
    if (this.commitTimer || this.closed) return;
    this.commitTimer = setTimeout(() => {
      this.commitTimer = undefined;
      this.commit();
    }, COMMIT_EVERY_MS);
    this.commitTimer.unref();
  }

  /** Commits what can be committed; one commit at a time, and one more if anything was finished meanwhile. */
  private commit(): void {
    if (this.closed) return;
    if (this.committing) {
      this.commitAgain = true;
      return;
    }
    this.committing = this.commitFinished().finally(() => {
      this.committing = undefined;
      if (this.commitAgain) {
        this.commitAgain = false;
        this.commit();
      }
    });
  }

  /** One commit of every partition's finished offsets not committed yet; never rejects. */
  private async commitFinished(): Promise<void> {
    const due: { topic: string; partition: number; offset: string }[] = [];
    for (const [partition, offsets] of this.partitions) {
      const offset = offsets.toCommit();
      if (offset !== undefined) due.push({ topic: this.where.name, partition, offset: String(offset) });
    }
    if (due.length === 0) return;
    try {
      await this.consumer.commitOffsets(due);
      for (const { partition, offset } of due) this.partitions.get(partition)?.committedUpTo(Number(offset));
    } catch (err) {
      // The group rebalanced meanwhile; whoever holds the partition next reads from the last commit.
      this.logger.debug({ err, topic: this.where.name }, 'Kafka offset commit failed');
    }
  }
}

/** Kafka headers as TrustGraph's properties: strings. */
function stringHeaders(headers: KafkaMessage['headers']): Record<string, string> {
  const properties: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers ?? {})) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) properties[key] = Buffer.isBuffer(first) ? first.toString('utf8') : String(first);
  }
  return properties;
}
