/**
 * bench:faults' gateway: keeps conversations going as TrustGraph's gateway would (a first request on the flow's
 * request topic, then every response under its `id` until `end_of_dialog`) and remembers, per conversation, when
 * it was sent, when and how often it ended, and how. A publish that fails never reached the broker: it is
 * counted apart (`unsent`), and the worker waits a little before it tries again instead of spinning.
 */
import { randomUUID } from 'node:crypto';
import { queueToTopic } from '../../src/bus/topics.js';
import type { Consumer, Producer, Transport } from '../../src/bus/transport.js';
import { uniqueSuffix } from '../../dev/flow-config.js';
import { sleep } from './stats.js';
import { REQUEST_BODY } from './workload.js';

export interface Conversation {
  readonly id: string;
  /** performance.now() when the first request was handed to the producer. */
  readonly start: number;
  /** performance.now() of the first `end_of_dialog`; undefined: none came. */
  end?: number;
  /** `end_of_dialog` responses seen (more than one: a duplicated final message). */
  finals: number;
  error?: string;
  answer: string;
  /** Why the first request could not be published. */
  unsent?: string;
}

const RETRY_AFTER_UNSENT_MS = 250;

export class FaultGateway {
  private readonly conversations = new Map<string, Conversation>();
  private readonly waiting = new Map<string, () => void>();

  private consumer!: Consumer;
  private producer!: Producer;

  private constructor() {}

  static async start(transport: Transport, topics: Record<string, string>): Promise<FaultGateway> {
    const gateway = new FaultGateway();
    gateway.consumer = await transport.subscribe({
      topic: queueToTopic(topics.response!),
      subscription: `bench-faults-gateway-${uniqueSuffix(6)}`,
      subscriptionType: 'Exclusive',
      handler: async (message) => {
        await message.ack();
        gateway.onResponse(message.properties.id ?? '', message.payload);
      },
    });
    gateway.producer = await transport.createProducer(queueToTopic(topics.request!));
    return gateway;
  }

  /** `inFlight` workers, each starting a conversation when its last one ended (or waited `timeoutMs`), until `done()`. */
  async run(inFlight: number, done: () => boolean, timeoutMs: number): Promise<void> {
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (!done()) {
          const sent = await this.converse(timeoutMs);
          if (!sent) await sleep(RETRY_AFTER_UNSENT_MS);
        }
      }),
    );
  }

  /** `count` conversations at once; resolves when each has ended or waited `timeoutMs`. */
  async burst(count: number, timeoutMs: number): Promise<void> {
    await Promise.all(Array.from({ length: count }, () => this.converse(timeoutMs)));
  }

  all(): Conversation[] {
    return [...this.conversations.values()];
  }

  async stop(): Promise<void> {
    await Promise.allSettled([this.consumer.close({ unsubscribe: true }), this.producer.close()]);
  }

  /** Resolves false when the request could not be published, else true once it ended or timed out. */
  private async converse(timeoutMs: number): Promise<boolean> {
    const conversation: Conversation = { id: randomUUID(), start: performance.now(), finals: 0, answer: '' };
    this.conversations.set(conversation.id, conversation);
    const ended = new Promise<void>((resolve) => this.waiting.set(conversation.id, resolve));
    try {
      await this.producer.send({ payload: REQUEST_BODY, properties: { id: conversation.id } });
    } catch (error) {
      conversation.unsent = error instanceof Error ? error.message : String(error);
      this.waiting.delete(conversation.id);
      return false;
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([ended, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
    this.waiting.delete(conversation.id);
    return true;
  }

  private onResponse(id: string, payload: Buffer): void {
    const conversation = this.conversations.get(id);
    if (!conversation) return;
    const response = JSON.parse(payload.toString('utf8')) as { message_type?: string; content?: string; error?: { message?: string } | null; end_of_dialog?: boolean };
    if (response.error) conversation.error ??= response.error.message ?? 'error';
    if (response.message_type === 'answer') conversation.answer += response.content ?? '';
    if (!response.end_of_dialog) return;
    conversation.finals++;
    if (conversation.finals > 1) return;
    conversation.end = performance.now();
    this.waiting.get(id)?.();
  }
}
