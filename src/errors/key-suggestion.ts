/**
 * "Did you mean": the key a misspelt config key most likely stands for. Keys are compared the way people
 * misspell them: case, `_` or `-` or camelCase (`applicable_state`, `availableInStates`), a plural (`groups`),
 * a letter or two off (Levenshtein), and a few names other agents use for the same thing (`next-state`).
 */
import { distance } from 'fastest-levenshtein';

/** `availableInStates`, `available_in_states`, `Available In States` → `available-in-states`. */
export function normaliseKey(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .toLowerCase()
    .replace(/[\s_.-]+/g, '-');
}

/** Names other agents and documents give the keys TrustGraph's tool entries use (normalised). */
const SYNONYMS: Readonly<Record<string, string>> = {
  groups: 'group',
  'tool-group': 'group',
  'tool-groups': 'group',
  'next-state': 'state',
  'new-state': 'state',
  'to-state': 'state',
  'target-state': 'state',
  'then-state': 'state',
  'transition-to': 'state',
  states: 'applicable-states',
  'in-states': 'applicable-states',
  'allowed-states': 'applicable-states',
  'available-states': 'applicable-states',
  'valid-states': 'applicable-states',
};

/** Most edits between a misspelt key and the key it stands for, by the key's length. */
const maxEdits = (key: string): number => (key.length <= 4 ? 1 : key.length <= 8 ? 2 : 3);

/**
 * The known key `key` most likely stands for, or undefined when none is close. `value` decides between keys
 * that differ in kind: a list under a misspelt `state` is meant for a state list (`listKey`), not the target.
 */
export function suggestKey(key: string, value: unknown, known: readonly string[], listKey?: { single: string; list: string }): string | undefined {
  const wanted = normaliseKey(key);
  const byForm = new Map(known.map((k) => [normaliseKey(k), k] as const));
  let found = byForm.get(wanted) ?? byForm.get(SYNONYMS[wanted] ?? '');
  if (found === undefined) {
    let best = maxEdits(wanted) + 1;
    for (const [form, original] of byForm) {
      const d = distance(form, wanted);
      if (d < best || (d === best && found !== undefined && original < found)) {
        best = d;
        found = original;
      }
    }
  }
  if (found !== undefined && listKey !== undefined && found === listKey.single && Array.isArray(value)) return listKey.list;
  return found;
}
