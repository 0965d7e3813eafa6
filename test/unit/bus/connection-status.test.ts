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
});
