/** A config type's entries in the order TrustGraph's config service returns them (config-key order). */
import { describeValue } from '../../errors/index.js';
import { makeProblem, type ConfigKind, type Problem } from '../config/problems.js';
import { CHEAP_ITEMS_PER_STEP, type Steps } from '../../threads/index.js';

const HAS_SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Order of config keys as the config service returns them (Cassandra: UTF-8 byte order, which is
 * code-point order). UTF-16 order differs only when surrogate pairs are involved.
 */
export function compareConfigKeys(a: string, b: string): number {
  if (HAS_SURROGATE.test(a) || HAS_SURROGATE.test(b)) return Buffer.compare(Buffer.from(a), Buffer.from(b));
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The entries of a config type in config-key order, as steps (yielding every `CHEAP_ITEMS_PER_STEP` keys:
 * 10 000 tools are 10 000 entries), or a problem when the type's value is not a key → value map.
 */
export function* entriesOf(
  workspace: string,
  kind: ConfigKind,
  values: unknown,
  problems: Problem[],
): Steps<[string, unknown][]> {
  if (values === null || values === undefined) return [];
  if (typeof values !== 'object' || Array.isArray(values)) {
    problems.push(
      makeProblem(
        { workspace, kind, key: '' },
        { message: `config type "${kind}" must map config keys to JSON strings, got ${describeValue(values)}` },
      ),
    );
    return [];
  }
  const map = values as Record<string, unknown>;
  const keys = Object.keys(map);
  const entries = new Array<[string, unknown]>(keys.length);
  // Checking each key once, not on every comparison: sorting 10 000 keys compares them ~130 000 times.
  let surrogates = false;
  // The config service answers in key order, so the entries usually are sorted already: one pass instead of a sort.
  let sorted = true;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    entries[i] = [key, map[key]];
    if (!surrogates && HAS_SURROGATE.test(key)) surrogates = true;
    if (sorted && i > 0 && keys[i - 1]! > key) sorted = false;
    if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
  }
  if (surrogates) return entries.sort(([a], [b]) => compareConfigKeys(a, b));
  if (sorted) return entries;
  return entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
