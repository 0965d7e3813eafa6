/**
 * Immutability helpers for the registry. `Object.freeze` does not stop `Set.add` or `Map.set`, so sets and
 * maps handed out by the registry get their mutators replaced by functions that throw.
 */
import { InvalidUseError } from '../errors/index.js';

function refuseMutation(): never {
  throw new InvalidUseError('this collection belongs to a tool registry and is read-only');
}

/** A `Set` whose `add`, `delete` and `clear` throw. */
export function frozenSet<T>(items: Iterable<T>): ReadonlySet<T> {
  const set = new Set(items);
  Object.defineProperties(set, {
    add: { value: refuseMutation },
    delete: { value: refuseMutation },
    clear: { value: refuseMutation },
  });
  return Object.freeze(set);
}

/** A `Map` whose `set`, `delete` and `clear` throw. */
export function frozenMap<K, V>(entries: Iterable<readonly [K, V]>): ReadonlyMap<K, V> {
  const map = new Map(entries);
  Object.defineProperties(map, {
    set: { value: refuseMutation },
    delete: { value: refuseMutation },
    clear: { value: refuseMutation },
  });
  return Object.freeze(map);
}

/**
 * Freeze a JSON-like value and everything reachable from it (plain objects and arrays; sets and maps
 * are expected to come from `frozenSet`/`frozenMap`). Already-frozen values are not walked again.
 * Iterative, so any depth is fine: a config value nested 200 000 levels must not overflow the stack.
 */
export function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (item === null || typeof item !== 'object' || Object.isFrozen(item)) continue;
    Object.freeze(item);
    for (const key of Object.keys(item)) stack.push((item as Record<string, unknown>)[key]);
  }
  return value;
}
