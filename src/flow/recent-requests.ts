/**
 * The requests a flow is running or ended within the last minute, by id and bytes. A broker that lost an ack
 * (RabbitMQ: the connection closed before the node read it, or the queue's node went and a mirror took over
 * without it) delivers the request again, marked redelivered, possibly to the replica that ran it or still
 * runs it: that delivery is a duplicate, and running it would end the conversation twice.
 */
import { createHash } from 'node:crypto';

/** How long an ended request is remembered: a redelivery comes within seconds of the ack it replaces. */
const REMEMBER_MS = 60_000;
/** At most this many ended requests are remembered, the oldest forgotten first. */
const REMEMBER_AT_MOST = 100_000;

export class RecentRequests {
  private readonly running = new Map<string, number>();
  /** Key → when it ended; a Map keeps insertion order, so the first is the oldest. */
  private readonly ended = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The key of a request: its id and a digest of its bytes (a `next` request has its conversation's id). */
  static keyOf(id: string, payload: Buffer): string {
    return `${id}\n${createHash('sha1').update(payload).digest('base64')}`;
  }

  /** True when this request runs here or ended here within the last minute. */
  has(key: string): boolean {
    this.forgetOld();
    return this.running.has(key) || this.ended.has(key);
  }

  /** True while this request runs here: a copy of it now, however it came, would end its conversation twice. */
  isRunning(key: string): boolean {
    return this.running.has(key);
  }

  begin(key: string): void {
    this.running.set(key, (this.running.get(key) ?? 0) + 1);
  }

  /** `remember`: false for a request given back to the broker, whose next delivery is meant to run. */
  end(key: string, remember: boolean): void {
    const count = (this.running.get(key) ?? 1) - 1;
    if (count > 0) this.running.set(key, count);
    else this.running.delete(key);
    this.ended.delete(key);
    if (remember) this.ended.set(key, this.now());
    this.forgetOld();
  }

  private forgetOld(): void {
    const before = this.now() - REMEMBER_MS;
    for (const [key, at] of this.ended) {
      if (at > before && this.ended.size <= REMEMBER_AT_MOST) break;
      this.ended.delete(key);
    }
  }
}
