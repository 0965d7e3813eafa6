import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConnectionStatus } from '../../../src/bus/connection-status.js';

describe('the settle after a reconnect', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const settledAfter = async (status: ConnectionStatus, ms: number): Promise<boolean> => {
    let settled = false;
    void status.settled().then(() => (settled = true));
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
    expect(await settledAfter(status, 0)).toBe(true); // still down: the transport waits for its links itself
    status.set(true);
    expect(await settledAfter(status, 2900)).toBe(false);
    expect(await settledAfter(status, 100)).toBe(true);
    expect(await settledAfter(status, 0)).toBe(true);
  });
});
