/**
 * At most `limit` requests in flight to one service request topic: a request takes a slot before it is
 * published and gives it back when it ends; the others wait here, in the order they came, for a slot.
 *
 * A service's consumer takes only what its receiver queue has room for; on a non-persistent topic the broker
 * drops the rest. Queuing a burst in this process costs a few bytes per call, so a burst never reaches the
 * service larger than it can receive.
 *
 * Every request holds its own slot (a hedged request's second sending and a request sent once more after a
 * lost connection each take one); a ticket is given back once, whatever way its call ended, and a queued
 * ticket given back leaves the queue.
 */
import { InvalidUseError } from '../errors/index.js';

/** One call's claim: a slot held, or a place in the queue for one. */
export interface SlotTicket {
  /** True while the call holds a slot. */
  readonly held: boolean;
  /** Gives the slot, or the place in the queue, back. Only the first call does anything. */
  release(): void;
}

/** Who the slots are for, in the words an operator reads in the queue-timeout error. */
export interface CallSlotsOptions {
  /** Requests in flight at most. */
  readonly limit: number;
  /** The service the topic belongs to, e.g. `prompt`. */
  readonly service: string;
  /** What to do when a call waited its whole timeout for a slot, e.g. which option raises the limit. */
  readonly advice: string;
}

type TicketState = 'queued' | 'held' | 'released';

class Ticket implements SlotTicket {
  state: TicketState;

  constructor(
    private readonly slots: CallSlots,
    held: boolean,
    readonly granted: () => void,
  ) {
    this.state = held ? 'held' : 'queued';
  }

  get held(): boolean {
    return this.state === 'held';
  }

  release(): void {
    this.slots.leave(this);
  }
}

/** A queue this long of tickets already taken from its head is cut off. */
const COMPACT_AFTER = 1024;

export class CallSlots {
  readonly limit: number;
  readonly service: string;
  readonly advice: string;
  private active = 0;
  private waiting = 0;
  /** Queued tickets from `head` on, in order; released ones stay until they reach the head. */
  private queue: Ticket[] = [];
  private head = 0;

  constructor(options: CallSlotsOptions) {
    if (!Number.isInteger(options.limit) || options.limit < 1) {
      throw new InvalidUseError(`the requests in flight to ${options.service} must be limited to an integer >= 1, got ${options.limit}`);
    }
    this.limit = options.limit;
    this.service = options.service;
    this.advice = options.advice;
  }

  /** Requests holding a slot now. */
  get inFlight(): number {
    return this.active;
  }

  /** Requests waiting for a slot now. */
  get queued(): number {
    return this.waiting;
  }

  /**
   * A ticket for one request: it holds a slot at once when one is free and nobody waits, else it is queued, and
   * `granted` runs when it gets its slot (never after it was released).
   */
  enter(granted: () => void): SlotTicket {
    const free = this.active < this.limit && this.waiting === 0;
    const ticket = new Ticket(this, free, granted);
    if (free) {
      this.active++;
    } else {
      this.waiting++;
      this.queue.push(ticket);
    }
    return ticket;
  }

  /** A ticket given back (Ticket.release). */
  leave(ticket: Ticket): void {
    const was = ticket.state;
    if (was === 'released') return;
    ticket.state = 'released';
    if (was === 'queued') {
      this.waiting--;
      if (this.waiting === 0) this.queue = [];
      if (this.waiting === 0) this.head = 0;
      return;
    }
    this.active--;
    this.grant();
  }

  /** Free slots to the oldest queued tickets. */
  private grant(): void {
    while (this.active < this.limit && this.waiting > 0) {
      const ticket = this.queue[this.head++];
      if (!ticket) break;
      if (ticket.state !== 'queued') continue;
      ticket.state = 'held';
      this.active++;
      this.waiting--;
      ticket.granted();
    }
    if (this.head >= this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > COMPACT_AFTER && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}
