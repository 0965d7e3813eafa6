/**
 * What one consumer has taken from one Kafka partition, for committing offsets in order.
 *
 * Kafka keeps one offset per partition and group, not an acknowledgement per message, while our handlers
 * finish messages in any order. So the offset committed is that of the oldest message not yet acknowledged
 * (or the one after the newest, when all are): nothing unfinished is ever committed past, and a message is
 * read again only if the process goes before finishing it.
 *
 * When the client fetches again from the committed offset (after it restarts a consumer that failed, say),
 * what this process already holds or has finished is not handed out a second time. A partition given to
 * another member and back (a rebalance while the group's coordinator moves) is counted afresh from the group's
 * offset, which may be behind what this process took before (a commit lost with the coordinator): those
 * offsets are handed out again, and `takenBefore` says which, for the handler to tell a duplicate.
 */
export class PartitionOffsets {
  /** Offsets taken and not finished. `take` adds only rising offsets and a Set keeps insertion order, so the first is the oldest. */
  private readonly unfinished = new Set<number>();
  private newest = -1;
  private committed = -1;

  /** `previouslyTaken`: the newest offset this process took from the partition while it held it before. */
  constructor(private readonly previouslyTaken = -1) {}

  /** True when this process took `offset` while it held the partition before. */
  takenBefore(offset: number): boolean {
    return offset <= this.previouslyTaken;
  }

  /** The newest offset this process has taken from the partition, in this tenure or the one before. */
  get newestTaken(): number {
    return Math.max(this.newest, this.previouslyTaken);
  }

  /** True when `offset` is new to this process: it is now held until `finish`. */
  take(offset: number): boolean {
    if (offset <= this.newest) return false;
    this.newest = offset;
    this.unfinished.add(offset);
    return true;
  }

  finish(offset: number): void {
    this.unfinished.delete(offset);
  }

  get held(): number {
    return this.unfinished.size;
  }

  /** The offset to commit now (the next one this group should read), or undefined when it is already committed. */
  toCommit(): number | undefined {
    if (this.newest < 0) return undefined;
    const oldest = this.unfinished.values().next();
    const next = oldest.done ? this.newest + 1 : oldest.value;
    return next > this.committed ? next : undefined;
  }

  committedUpTo(offset: number): void {
    if (offset > this.committed) this.committed = offset;
  }
}
