/**
 * Which of a set of names are a case variant of a given name, or within two edits of it (Levenshtein), found
 * without comparing every pair: the symmetric-delete method. Two names within two edits of each other share a
 * string that each becomes by deleting at most two of its characters (a substitution is a deletion in both, an
 * insertion in one a deletion in the other). So every indexed name is filed under each of its deletion
 * variants, a query looks up its own, and only the few names found that way are measured with the edit
 * distance. Checking n names against m costs O((n + m) · L²) for names of length L, never O(n · m).
 *
 * A name of length L has about L²/2 variants: names longer than `MAX_EDITED_LENGTH` are matched by case only,
 * and the index files at most `MAX_INDEXED_VARIANTS` variants in all (the names past that are matched by case
 * only too, and `caseOnly` counts them), so no input makes the index larger than a few tens of megabytes.
 */
import { distance } from 'fastest-levenshtein';
import type { Steps } from '../threads/index.js';

/** Longest name compared by edit distance (528 deletion variants); longer ones only by case. */
export const MAX_EDITED_LENGTH = 32;
/** Most deletion variants the index holds (about 50 MB at most). */
export const MAX_INDEXED_VARIANTS = 500_000;
/** Most edits between a name and a near one. */
const MAX_EDITS = 2;

/** The name and every string it becomes by deleting one or two of its characters, each once. */
export function deletionVariants(name: string): Set<string> {
  const out = new Set<string>([name]);
  for (let i = 0; i < name.length; i++) {
    const once = name.slice(0, i) + name.slice(i + 1);
    out.add(once);
    for (let j = i; j < once.length; j++) out.add(once.slice(0, j) + once.slice(j + 1));
  }
  return out;
}

const add = (map: Map<string, number[]>, key: string, position: number): void => {
  const list = map.get(key);
  if (list === undefined) map.set(key, [position]);
  else if (list[list.length - 1] !== position) list.push(position);
};

export class NearNames {
  private readonly byVariant = new Map<string, number[]>();
  private readonly byLower = new Map<string, number[]>();
  private variants = 0;
  /** Names short enough to compare by edit distance that are matched by case only: the variant budget ran out before them. */
  caseOnly = 0;

  private constructor(readonly names: readonly string[]) {}

  /** The index of `names`, as steps: one step per name. */
  static *build(names: readonly string[], budget = MAX_INDEXED_VARIANTS): Steps<NearNames> {
    const index = new NearNames(names);
    for (let position = 0; position < names.length; position++) {
      const name = names[position]!;
      add(index.byLower, name.toLowerCase(), position);
      if (name.length <= MAX_EDITED_LENGTH) {
        const variants = deletionVariants(name);
        if (index.variants + variants.size <= budget) {
          for (const variant of variants) add(index.byVariant, variant, position);
          index.variants += variants.size;
        } else {
          index.caseOnly++;
        }
      }
      yield;
    }
    return index;
  }

  /** Positions, ascending, of the indexed names other than `name` that are a case variant of it or within two edits of it. */
  near(name: string): number[] {
    const candidates = new Set<number>(this.byLower.get(name.toLowerCase()));
    if (name.length <= MAX_EDITED_LENGTH) {
      for (const variant of deletionVariants(name)) for (const position of this.byVariant.get(variant) ?? []) candidates.add(position);
    }
    const lower = name.toLowerCase();
    const out: number[] = [];
    for (const position of candidates) {
      const other = this.names[position]!;
      if (other !== name && (other.toLowerCase() === lower || distance(other, name) <= MAX_EDITS)) out.push(position);
    }
    return out.sort((a, b) => a - b);
  }
}
