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
    expect(seen.remember('a', 10_000, 5)).toBe(true);
    expect(seen.remember('x', 50_000, 20_000)).toBe(true);
    expect(seen.size).toBe(1);
  });
});
