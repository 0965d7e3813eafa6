// The symmetric-delete index finds exactly the names a comparison of every pair finds.
import fc from 'fast-check';
import { distance } from 'fastest-levenshtein';
import { describe, expect, it } from 'vitest';
import { runToEnd } from '../../../src/threads/time-slices.js';
import { deletionVariants, MAX_EDITED_LENGTH, NearNames } from '../../../src/workflow/near-names.js';
import { propertySeed } from '../../support/fast-check-seed.js';

/** The definition, pair by pair. */
const nearByDefinition = (names: readonly string[], name: string): number[] =>
  names.flatMap((other, position) =>
    other !== name && (other.toLowerCase() === name.toLowerCase() || (name.length <= MAX_EDITED_LENGTH && other.length <= MAX_EDITED_LENGTH && distance(other, name) <= 2))
      ? [position]
      : [],
  );

const nameArb = fc.string({ unit: fc.constantFrom('a', 'b', 'A', 'c', '.', 'é'), maxLength: 7 });

describe('NearNames', () => {
  it('finds exactly the case variants and the names within two edits, for random names', () => {
    fc.assert(
      fc.property(fc.uniqueArray(nameArb, { maxLength: 30 }), fc.array(nameArb, { minLength: 1, maxLength: 10 }), (names, queries) => {
        const index = runToEnd(NearNames.build(names));
        for (const query of [...queries, ...names]) expect(index.near(query)).toEqual(nearByDefinition(names, query));
      }),
      propertySeed('near names'),
    );
  });

  it('files each name under every deletion of at most two characters, once', () => {
    expect([...deletionVariants('abc')].sort()).toEqual(['a', 'ab', 'abc', 'ac', 'b', 'bc', 'c']);
    expect([...deletionVariants('aa')].sort()).toEqual(['', 'a', 'aa']);
  });

  it('matches long names by case only, and past its budget counts the names it matches by case only', () => {
    const long = `${'x'.repeat(MAX_EDITED_LENGTH)}y`;
    const index = runToEnd(NearNames.build([long, 'research', 'Writers'], 10));
    expect(index.near(`${'x'.repeat(MAX_EDITED_LENGTH)}z`)).toEqual([]);
    expect(index.near(long.toUpperCase())).toEqual([0]);
    // "research" has 37 variants: over a budget of 10, so it is matched by case only, and counted.
    expect(index.caseOnly).toBe(2);
    expect(index.near('reserch')).toEqual([]);
    expect(index.near('RESEARCH')).toEqual([1]);
    expect(runToEnd(NearNames.build(['research'])).near('reserch')).toEqual([0]);
  });
});
