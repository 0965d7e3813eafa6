import { describe, expect, it } from 'vitest';
import { SeenSignatures } from '../../../src/security/seen-signatures.js';

describe('the replay cache', () => {
  it('refuses a signature seen before until it expires', () => {
    const seen = new SeenSignatures(10);
    expect(seen.remember('a', 1000, 0)).toBe(true);
    expect(seen.remember('a', 1000, 999)).toBe(false);
    expect(seen.remember('a', 2000, 1000)).toBe(true);
  });

  it('drops expired entries and stays within its capacity, oldest first', () => {
    const seen = new SeenSignatures(3);
    for (const [i, s] of ['a', 'b', 'c', 'd'].entries()) expect(seen.remember(s, 10_000 + i, i)).toBe(true);
    expect(seen.size).toBe(3);
    expect(seen.remember('d', 10_000, 5)).toBe(false);
    expect(seen.remember('x', 50_000, 20_000)).toBe(true);
    expect(seen.size).toBe(1);
  });

  it('never stores what has already expired', () => {
    const seen = new SeenSignatures(3);
    expect(seen.remember('live', 10_000, 0)).toBe(true);
    for (let i = 0; i < 100; i++) expect(seen.remember(`expired-${i}`, 5, 10)).toBe(false);
    expect(seen.size).toBe(1);
    expect(seen.remember('live', 10_000, 10)).toBe(false);
  });

  it('fails closed when live entries are pushed out: what expires no later than one pushed out is taken as seen', () => {
    const seen = new SeenSignatures(3);
    for (const [i, s] of ['a', 'b', 'c', 'd'].entries()) expect(seen.remember(s, 10_000 + i, i)).toBe(true);
    expect(seen.forgetting).toBe(true);
    // `a` was pushed out: its replay is still refused, as is a never-seen signature older than it.
    expect(seen.remember('a', 10_000, 5)).toBe(false);
    expect(seen.remember('never-seen-but-older', 9_999, 5)).toBe(false);
    expect(seen.remember('newer', 10_004, 5)).toBe(true);
    // Once what was pushed out has expired, nothing is refused for it.
    expect(seen.remember('later', 30_000, 10_010)).toBe(true);
    expect(seen.forgetting).toBe(false);
  });
});
