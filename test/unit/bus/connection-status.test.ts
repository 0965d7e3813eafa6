import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConnectionStatus } from '../../../src/bus/connection-status.js';

describe('the settle after a reconnect', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const settledAfter = async (status: ConnectionStatus, ms: number): Promise<boolean> => {
    let settled = false;
    void status.settled(10_000).then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(ms);
    return settled;
  };

  it('lets publishes through at once until a connection has been lost', async () => {
    const status = new ConnectionStatus(3000);
    status.set(false, 'connecting');
    status.set(true);
    expect(await settledAfter(status, 0)).toBe(true);
  });

  it('holds publishes for the settle time after a lost connection is whole again, then no longer', async () => {
    const status = new ConnectionStatus(3000);
    status.lost('broker gone');
    let down = false;
    void status.settled(10_000).then(() => (down = true));
    await vi.advanceTimersByTimeAsync(5000);
    expect(down).toBe(false); // still down: it waits for the whole connection, then the settle
    status.set(true);
    await vi.advanceTimersByTimeAsync(2999);
    expect(down).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(down).toBe(true);
    expect(await settledAfter(status, 0)).toBe(true);
  });

  it('waits at most its bound for a connection that does not come back', async () => {
    const status = new ConnectionStatus(3000);
    status.lost('broker gone');
    let settled = false;
    void status.settled(10_000).then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(9_999);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toBe(true);
  });

  describe('with a subscriber check (the broker admin API)', () => {
    /** A check that answers when told, and records what it was asked. */
    const check = () => {
      const asked: string[] = [];
      let release: () => void = () => undefined;
      const present = new Promise<void>((resolve) => (release = resolve));
      return { asked, release: () => release(), waitFor: async (topic: string) => { asked.push(topic); await present; } };
    };

    it('after a reconnect, holds a publish to a non-persistent topic until the topic has a subscriber, asking once per topic', async () => {
      const subscribers = check();
      const status = new ConnectionStatus(0, subscribers);
      status.lost('broker gone');
      status.set(true);
      const done: string[] = [];
      const topic = 'non-persistent://tg/response/agent:default';
      void status.settled(10_000, topic).then(() => done.push('first'));
      void status.settled(10_000, topic).then(() => done.push('second'));
      void status.settled(10_000, 'persistent://tg/flow/triples-store:default').then(() => done.push('persistent'));
      await vi.advanceTimersByTimeAsync(100);
      expect(done).toEqual(['persistent']);
      subscribers.release();
      await vi.advanceTimersByTimeAsync(0);
      expect(done).toEqual(['persistent', 'first', 'second']);
      expect(subscribers.asked).toEqual([topic]);
    });

    it('does not ask before any connection was lost, nor a minute after the reconnect', async () => {
      const subscribers = check();
      const status = new ConnectionStatus(0, subscribers);
      const topic = 'non-persistent://tg/request/prompt:default';
      expect(await status.settled(10_000, topic)).toBe(true);
      status.lost('broker gone');
      status.set(true);
      await vi.advanceTimersByTimeAsync(60_000);
      expect(await status.settled(10_000, topic)).toBe(true);
      expect(subscribers.asked).toEqual([]);
    });

    it('asks again after the next reconnect', async () => {
      const asked: string[] = [];
      const status = new ConnectionStatus(0, { waitFor: async (topic) => void asked.push(topic) });
      const topic = 'non-persistent://tg/request/prompt:default';
      for (let i = 0; i < 2; i++) {
        status.lost('broker gone');
        status.set(true);
        await status.settled(10_000, topic);
        await status.settled(10_000, topic);
      }
      expect(asked).toEqual([topic, topic]);
    });
  });
});
