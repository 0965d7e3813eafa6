import { describe, expect, it } from 'vitest';
import { PartitionOffsets } from '../../../src/bus/kafka/offsets.js';

describe('offsets committed in order on a Kafka partition', () => {
  it('commits nothing before anything was taken', () => {
    expect(new PartitionOffsets().toCommit()).toBeUndefined();
  });

  it('never commits past a message not yet finished, whatever order the others finish in', () => {
    const offsets = new PartitionOffsets();
    for (const offset of [10, 11, 12, 13]) expect(offsets.take(offset)).toBe(true);
    offsets.finish(12);
    offsets.finish(13);
    expect(offsets.toCommit()).toBe(10);
    offsets.finish(10);
    expect(offsets.toCommit()).toBe(11);
    offsets.finish(11);
    expect(offsets.toCommit()).toBe(14);
    expect(offsets.held).toBe(0);
  });

  it('follows offsets with gaps between them (control records, compaction)', () => {
    const offsets = new PartitionOffsets();
    for (const offset of [3, 7, 9]) offsets.take(offset);
    offsets.finish(7);
    expect(offsets.toCommit()).toBe(3);
    offsets.finish(3);
    expect(offsets.toCommit()).toBe(9);
    offsets.finish(9);
    expect(offsets.toCommit()).toBe(10);
  });

  it('commits each point once', () => {
    const offsets = new PartitionOffsets();
    offsets.take(0);
    offsets.finish(0);
    expect(offsets.toCommit()).toBe(1);
    offsets.committedUpTo(1);
    expect(offsets.toCommit()).toBeUndefined();
  });

  it('does not hand out again what this process holds or has finished, when the client fetches from the last commit', () => {
    const offsets = new PartitionOffsets();
    offsets.take(5);
    offsets.take(6);
    offsets.finish(5);
    expect(offsets.take(5)).toBe(false);
    expect(offsets.take(6)).toBe(false);
    expect(offsets.take(7)).toBe(true);
    expect(offsets.held).toBe(2);
  });

  it('marks what this process took while it held the partition before as taken before, and nothing after it', () => {
    const first = new PartitionOffsets();
    for (const offset of [20, 21, 22]) first.take(offset);
    first.finish(20);
    // The partition went to another member and came back; the group's offset was left at 20.
    const again = new PartitionOffsets(first.newestTaken);
    expect([20, 21, 22, 23].map((offset) => again.take(offset) && again.takenBefore(offset))).toEqual([true, true, true, false]);
    expect(again.newestTaken).toBe(23);
    expect(new PartitionOffsets().takenBefore(0)).toBe(false);
  });
});
