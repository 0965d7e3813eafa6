/**
 * createUntilUp: creating a native producer or consumer again, each attempt bounded by a deadline of its own.
 * The creations here are stand-ins whose outcome the test controls; fake timers stand for the waits.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createUntilUp } from '../../../src/bus/pulsar/native/create-until-up.js';
import { TransportClosedError } from '../../../src/bus/errors.js';

interface Created {
  n: number;
  closed: boolean;
}

/** Attempts that fail, never settle or succeed as `plan` says, in order; the last entry repeats. */
function attempts(plan: ('fail' | 'hang' | 'ok')[]) {
  const made: Created[] = [];
  const pending: ((c: Created) => void)[] = [];
  let calls = 0;
  const create = (): Promise<Created> => {
    const step = plan[Math.min(calls, plan.length - 1)];
    calls++;
    if (step === 'fail') return Promise.reject(new Error('Failed to create producer: ConnectError'));
    const created: Created = { n: calls, closed: false };
    made.push(created);
    if (step === 'ok') return Promise.resolve(created);
    return new Promise((resolve) => pending.push(() => resolve(created)));
  };
  return { create, made, pending, calls: () => calls };
}

const dispose = (c: Created): Promise<void> => {
  c.closed = true;
  return Promise.resolve();
};

describe('createUntilUp', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const options = { dispose, attemptTimeoutMs: 11_000, what: 'producer for t', logger: pino({ level: 'silent' }) };

  it('tries again after a failed attempt, until one succeeds', async () => {
    const plan = attempts(['fail', 'fail', 'ok']);
    const created = createUntilUp({ ...options, create: plan.create, signal: new AbortController().signal });
    await vi.advanceTimersByTimeAsync(2000);
    await expect(created).resolves.toMatchObject({ n: 3, closed: false });
    expect(plan.calls()).toBe(3);
  });

  it('gives an attempt that never settles up at its deadline, tries again, and closes the late one when it comes', async () => {
    const plan = attempts(['hang', 'ok']);
    const created = createUntilUp({ ...options, create: plan.create, signal: new AbortController().signal });
    await vi.advanceTimersByTimeAsync(10_999);
    expect(plan.calls()).toBe(1);
    await vi.advanceTimersByTimeAsync(2001);
    await expect(created).resolves.toMatchObject({ n: 2, closed: false });

    plan.pending[0]!({ n: 1, closed: false });
    await vi.advanceTimersByTimeAsync(0);
    expect(plan.made[0]!.closed).toBe(true);
  });

  it('ends at once when its owner closes, and closes what the attempt under way creates', async () => {
    const plan = attempts(['hang']);
    const closing = new AbortController();
    const created = createUntilUp({ ...options, create: plan.create, signal: closing.signal });
    const outcome = created.catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(100);
    closing.abort();
    await vi.advanceTimersByTimeAsync(0);
    expect(await outcome).toBeInstanceOf(TransportClosedError);

    plan.pending[0]!({ n: 1, closed: false });
    await vi.advanceTimersByTimeAsync(0);
    expect(plan.made[0]!.closed).toBe(true);
    expect(plan.calls()).toBe(1);
  });
});
