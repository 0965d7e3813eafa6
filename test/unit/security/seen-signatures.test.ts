import { describe, expect, it } from 'vitest';
import { SeenSignatures } from '../../../src/security/seen-signatures.js';

describe('the replay cache', () => {
  it('refuses a signature seen before until it expires', () => {
    const seen = new SeenSignatures(10, 0);
    expect(seen.remember('a', 1000, 0)).toBe('new');
    expect(seen.remember('a', 1000, 999)).toBe('seen');
    expect(seen.remember('a', 2000, 1000)).toBe('new');
  });

  it('drops expired entries and stays within its capacity, oldest first', () => {
    const seen = new SeenSignatures(3, 0);
    for (const [i, s] of ['a', 'b', 'c', 'd'].entries()) expect(seen.remember(s, 10_000 + i, i)).toBe('new');
    expect(seen.size).toBe(3);
    expect(seen.remember('d', 10_000, 5)).toBe('seen');
    expect(seen.remember('x', 50_000, 20_000)).toBe('new');
    expect(seen.size).toBe(1);
  });

  it('never stores what has already expired', () => {
    const seen = new SeenSignatures(3, 0);
    expect(seen.remember('live', 10_000, 0)).toBe('new');
    for (let i = 0; i < 100; i++) expect(seen.remember(`expired-${i}`, 5, 10)).toBe('seen');
    expect(seen.size).toBe(1);
    expect(seen.remember('live', 10_000, 10)).toBe('seen');
  });

  it('fails closed when live entries are pushed out: what expires no later than one pushed out is forgotten, never new', () => {
    const seen = new SeenSignatures(3, 0);
    for (const [i, s] of ['a', 'b', 'c', 'd'].entries()) expect(seen.remember(s, 10_000 + i, i)).toBe('new');
    expect(seen.forgetting).toBe(true);
    // `a` was pushed out: its replay is still refused, as is a never-seen signature older than it.
    expect(seen.remember('a', 10_000, 5)).toBe('forgotten');
    expect(seen.remember('never-seen-but-older', 9_999, 5)).toBe('forgotten');
    expect(seen.remember('newer', 10_004, 5)).toBe('new');
    // Once what was pushed out has expired (expiries are kept in whole seconds, rounded up), nothing is refused for it.
    expect(seen.remember('later', 30_000, 12_000)).toBe('new');
    expect(seen.forgetting).toBe(false);
  });

  it('keeps a signature it holds apart from one it may have forgotten, and works on real clock values', () => {
    const now = 1_765_000_000_000;
    const seen = new SeenSignatures(2, now);
    expect(seen.remember('first', now + 600_000, now)).toBe('new');
    expect(seen.remember('second', now + 601_000, now + 1_000)).toBe('new');
    expect(seen.remember('third', now + 602_000, now + 2_000)).toBe('new');
    // `second` is still held: a copy of it is known to be one.
    expect(seen.remember('second', now + 601_000, now + 3_000)).toBe('seen');
    // `first` was pushed out: it cannot be told from a replay.
    expect(seen.remember('first', now + 600_000, now + 3_000)).toBe('forgotten');
    // Once every entry has expired the memory is empty and forgets nothing.
    expect(seen.remember('later', now + 1_300_000, now + 700_000)).toBe('new');
    expect(seen.size).toBe(1);
    expect(seen.forgetting).toBe(false);
  });
});
