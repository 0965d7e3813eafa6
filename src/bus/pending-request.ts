/**
 * One sending of a request, from its wait for a slot (call-slots.ts) to its last reply: what RequestClient
 * keeps while it listens for the replies that carry the request's id. Replies and failures are queued in the
 * order they come and taken with `next()`. It ends once, whatever ends it (its last reply, a timeout, a lost
 * connection, the client closed, the sending abandoned): the timer stops, the client forgets it, its slot
 * (or its place in the queue for one) is given back.
 */
import { CallQueueTimeoutError, ConnectionLostError, RequestTimeoutError, TransportError } from './errors.js';
import type { CallSlots, SlotTicket } from './call-slots.js';
import type { TransportStatus } from './transport.js';
import { replyTimer, type ReplyTimer } from './reply-timer.js';

export type PendingItem<Res> = { value: Res; last: boolean } | { error: Error };

export interface PendingRequestOptions<Res> {
  readonly requestTopic: string;
  readonly id: string;
  /** The wait for the first reply (counting the wait for a slot) and for each one after it, in ms. */
  readonly firstMs: number;
  readonly gapMs: number;
  /** This is already the second sending of a request the connection lost. */
  readonly repeated: boolean;
  readonly isLast: (response: Res) => boolean;
  readonly status: () => TransportStatus;
  /** Called once, when it ends (the client forgets it). */
  readonly ended: () => void;
  readonly slots?: CallSlots | undefined;
}

export class PendingRequest<Res> {
  /** The transport epoch the request was sent in: Infinity while it waits for a slot, since nothing is sent yet. */
  epoch: number;
  private readonly queue: PendingItem<Res>[] = [];
  private wake: (() => void) | undefined;
  private received = 0;
  private timer: ReplyTimer | undefined;
  private readonly ticket: SlotTicket | undefined;
  private done = false;
  private readonly began = performance.now();

  constructor(private readonly options: PendingRequestOptions<Res>) {
    this.ticket = options.slots?.enter(() => this.granted());
    this.epoch = this.waitingForSlot ? Number.POSITIVE_INFINITY : options.status().epoch;
    this.arm(options.firstMs);
  }

  /** It is queued for a slot: nothing is sent yet. */
  get waitingForSlot(): boolean {
    return this.ticket?.held === false && !this.done;
  }

  /** Resolves when it may be sent (it holds a slot, or needs none) or has ended (`next()` then says why). */
  async sendable(): Promise<void> {
    while (this.waitingForSlot && this.queue.length === 0) await new Promise<void>((resolve) => (this.wake = resolve));
  }

  /** Whether it ended before it was sent (`next()` says why). */
  get failedEarly(): boolean {
    return this.queue.length > 0;
  }

  /** The next reply or failure, in the order they came. */
  async next(): Promise<PendingItem<Res>> {
    while (this.queue.length === 0) await new Promise<void>((resolve) => (this.wake = resolve));
    return this.queue.shift() as PendingItem<Res>;
  }

  onResponse(response: Res): void {
    this.received += 1;
    let last: boolean;
    try {
      last = this.options.isLast(response);
    } catch (err) {
      this.fail(asError(err));
      return;
    }
    if (last) this.stop();
    else this.arm(this.options.gapMs);
    this.push({ value: response, last });
  }

  /** Ends it with `error`, unless it ended already. */
  fail(error: Error): void {
    if (this.done) return;
    this.stop();
    this.push({ error });
  }

  /** The connection was lost (and is back) since it was sent. */
  onLost(): void {
    const { requestTopic, id, repeated } = this.options;
    this.fail(new ConnectionLostError(requestTopic, id, this.received, repeated));
  }

  /** Stops the timer, forgets it, gives its slot back. Idempotent. */
  stop(): void {
    this.timer?.cancel();
    if (this.done) return;
    this.done = true;
    this.ticket?.release();
    this.options.ended();
  }

  private push(item: PendingItem<Res>): void {
    this.queue.push(item);
    this.wake?.();
    this.wake = undefined;
  }

  /** Its slot came: it is sent now, in this epoch, with what is left of its wait for the first reply. */
  private granted(): void {
    this.epoch = this.options.status().epoch;
    this.arm(this.options.firstMs - (performance.now() - this.began));
    this.wake?.();
    this.wake = undefined;
  }

  private arm(waitMs: number): void {
    this.timer?.cancel();
    this.timer = replyTimer(this.options.status, this.epoch, waitMs, () => this.onLost(), () => this.fail(this.timeout()));
  }

  /** The timeout of the wait in progress: for a slot, or for the next reply. */
  private timeout(): RequestTimeoutError {
    const { requestTopic, id, firstMs, gapMs, slots } = this.options;
    if (this.waitingForSlot && slots) {
      const { service, limit, inFlight, queued, advice } = slots;
      return new CallQueueTimeoutError(requestTopic, firstMs, id, { service, limit, inFlight, queued, advice });
    }
    return new RequestTimeoutError(requestTopic, this.received === 0 ? firstMs : gapMs, id, this.received);
  }
}

/** A thrown value as an Error: itself, or (anything else thrown) a TransportError that carries it. */
function asError(err: unknown): Error {
  return err instanceof Error ? err : new TransportError(String(err), { retriable: false, cause: err });
}
