/** The bound on requests in flight to one service request topic: the limit, the order, each ticket given back once. */
import { describe, expect, it } from 'vitest';
import { CallSlots, type SlotTicket } from '../../../src/bus/call-slots.js';

const slots = (limit: number): CallSlots => new CallSlots({ limit, service: 'prompt', advice: 'raise it' });

describe('CallSlots', () => {
  it('holds at most `limit` tickets under a burst and queues the rest', () => {
    const prompt = slots(3);
    const tickets = Array.from({ length: 10 }, () => prompt.enter(() => undefined));
    expect(tickets.map((t) => t.held)).toEqual([true, true, true, false, false, false, false, false, false, false]);
    expect(prompt.inFlight).toBe(3);
    expect(prompt.queued).toBe(7);
  });

  it('grants the queued tickets in the order they came, one per slot given back', () => {
    const prompt = slots(2);
    const granted: number[] = [];
    const tickets: SlotTicket[] = [];
    for (let i = 0; i < 8; i++) tickets.push(prompt.enter(() => granted.push(i)));
    let maxHeld = 0;
    for (let i = 0; i < 8; i++) {
      tickets[i]!.release();
      maxHeld = Math.max(maxHeld, prompt.inFlight);
    }
    expect(granted).toEqual([2, 3, 4, 5, 6, 7]);
    expect(maxHeld).toBe(2);
    expect([prompt.inFlight, prompt.queued]).toEqual([0, 0]);
  });

  it('gives a slot back once however often its ticket is released', () => {
    const prompt = slots(1);
    const first = prompt.enter(() => undefined);
    const granted: string[] = [];
    prompt.enter(() => granted.push('second'));
    prompt.enter(() => granted.push('third'));
    first.release();
    first.release();
    expect(granted).toEqual(['second']);
    expect([prompt.inFlight, prompt.queued]).toEqual([1, 1]);
  });

  it('takes a queued ticket given back out of the queue: it is never granted, and those behind it move up', () => {
    const prompt = slots(1);
    const holder = prompt.enter(() => undefined);
    const granted: string[] = [];
    const leaving = prompt.enter(() => granted.push('leaving'));
    prompt.enter(() => granted.push('staying'));
    leaving.release();
    expect(leaving.held).toBe(false);
    expect(prompt.queued).toBe(1);
    holder.release();
    expect(granted).toEqual(['staying']);
    expect([prompt.inFlight, prompt.queued]).toEqual([1, 0]);
  });

  it('stays exact through many queued tickets given back (the queue is compacted)', () => {
    const prompt = slots(1);
    const holder = prompt.enter(() => undefined);
    const queued = Array.from({ length: 5000 }, () => prompt.enter(() => undefined));
    for (const ticket of queued.slice(0, 4000)) ticket.release();
    expect(prompt.queued).toBe(1000);
    holder.release();
    for (let i = 4000; i < 5000; i++) {
      expect(queued[i]!.held).toBe(true);
      queued[i]!.release();
    }
    expect([prompt.inFlight, prompt.queued]).toEqual([0, 0]);
    expect(prompt.enter(() => undefined).held).toBe(true);
  });

  it('refuses a limit that is not a whole number of at least 1, naming the service', () => {
    expect(() => slots(0)).toThrow(/prompt must be limited to an integer >= 1, got 0/);
    expect(() => slots(1.5)).toThrow(/got 1.5/);
  });
});
