import { pino } from 'pino';
import type { ProducerBatch } from 'kafkajs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RenewableProducer, type BatchProducer } from '../../../src/bus/kafka/renewable-producer.js';

/**
 * One partition as a Kafka broker keeps it for idempotent producers: the last sequence number written by each
 * producer id; a batch whose numbers were written already is taken for a copy and dropped (answered as written), one
 * that does not follow on is refused as out of order.
 */
class Partition {
  readonly records: string[] = [];
  private readonly lastSequence = new Map<number, number>();

  produce(producerId: number, firstSequence: number, values: string[]): void {
    const last = this.lastSequence.get(producerId) ?? -1;
    if (firstSequence + values.length - 1 <= last) return;
    if (firstSequence !== last + 1) throw Object.assign(new Error('The broker received an out of order sequence number'), { type: 'OUT_OF_ORDER_SEQUENCE_NUMBER' });
    this.records.push(...values);
    this.lastSequence.set(producerId, firstSequence + values.length - 1);
  }
}

/**
 * kafkajs's idempotent producer as it numbers batches: a producer id from the broker at connect, and a sequence
 * it takes back when a produce request fails, whether or not the broker wrote the batch.
 */
function kafkajsLikeProducer(partition: Partition, ids: { next: number }, faults: { answerLost: number }): BatchProducer & { disconnected: boolean } {
  let producerId = -1;
  let sequence = 0;
  const producer = {
    disconnected: false,
    connect: async () => {
      producerId = ids.next++;
    },
    disconnect: async () => {
      producer.disconnected = true;
    },
    sendBatch: async (batch: ProducerBatch) => {
      const values = batch.topicMessages!.flatMap((t) => t.messages.map((m) => String(m.value)));
      const first = sequence;
      sequence += values.length;
      try {
        partition.produce(producerId, first, values);
        if (faults.answerLost > 0) {
          faults.answerLost -= 1;
          throw new Error('Connection closed (the batch was written, its answer lost)');
        }
      } catch (err) {
        sequence -= values.length;
        throw err;
      }
      return [];
    },
  };
  return producer;
}

function batch(...values: string[]): ProducerBatch {
  return { topicMessages: [{ topic: 't', messages: values.map((value) => ({ value })) }] };
}

describe('the Kafka transport’s idempotent producer', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sends through a fresh producer after a send whose answer was lost, so later batches are neither refused nor dropped', async () => {
    const partition = new Partition();
    const ids = { next: 1 };
    const faults = { answerLost: 0 };
    const made: ReturnType<typeof kafkajsLikeProducer>[] = [];
    const producer = new RenewableProducer(() => made[made.push(kafkajsLikeProducer(partition, ids, faults)) - 1]!, 30_000, pino({ level: 'silent' }));
    await producer.connect();
    await producer.sendBatch(batch('a'));

    faults.answerLost = 1;
    const failed = await producer.sendBatch(batch('b')).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed).toMatchObject({ code: 'TG_TRANSPORT_SEND_UNACKNOWLEDGED', retriable: true });
    expect(String((failed as Error).message)).toContain('may or may not have been written');

    // As many records as the batch written without an answer (the same sequence numbers), then more.
    await producer.sendBatch(batch('c'));
    await producer.sendBatch(batch('d', 'e'));
    expect(partition.records).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(producer.renewals).toBe(1);
    await vi.waitFor(() => expect(made[0]!.disconnected).toBe(true));
    expect(made[1]!.disconnected).toBe(false);
  });

  it('fails a send kafkajs is still retrying at the send timeout, and sends the next through a fresh producer', async () => {
    vi.useFakeTimers();
    const made: BatchProducer[] = [];
    let hanging = true;
    const producer = new RenewableProducer(
      () => {
        const one: BatchProducer = {
          connect: async () => undefined,
          disconnect: async () => undefined,
          sendBatch: (hanging ? () => new Promise(() => undefined) : async () => []) as BatchProducer['sendBatch'],
        };
        hanging = false;
        made.push(one);
        return one;
      },
      5000,
      pino({ level: 'silent' }),
    );
    const first = producer.sendBatch(batch('a')).then(
      () => 'sent',
      (err: unknown) => err,
    );
    await vi.advanceTimersByTimeAsync(4999);
    expect(made).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await first).toMatchObject({ code: 'TG_TRANSPORT_SEND_UNACKNOWLEDGED', message: expect.stringContaining('not acknowledged within 5000 ms') });
    await expect(producer.sendBatch(batch('b'))).resolves.toBeUndefined();
    expect(made).toHaveLength(2);
  });

  it('says nothing was sent when a fresh producer cannot connect, and connects it on the next send', async () => {
    let refuse = true;
    const producer = new RenewableProducer(
      () => ({
        connect: async () => {
          if (refuse) throw new Error('Connection error: connect ECONNREFUSED');
        },
        disconnect: async () => undefined,
        sendBatch: async () => [],
      }),
      5000,
      pino({ level: 'silent' }),
    );
    await expect(producer.sendBatch(batch('a'))).rejects.toMatchObject({ code: 'TG_TRANSPORT_NOT_CONNECTED', message: expect.stringContaining('nothing was sent') });
    refuse = false;
    await expect(producer.sendBatch(batch('b'))).resolves.toBeUndefined();
    expect(producer.renewals).toBe(0);
  });
});
