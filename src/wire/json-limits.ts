/**
 * Limits on parsed JSON values, checked without recursion: a value nested 200 000 levels deep must give a
 * clear "too deep" answer, never `RangeError: Maximum call stack size exceeded` from the code that walks it.
 * Every recursive walk over JSON that came from outside (tool config, the model's `Args`) runs only after
 * `checkJsonLimits` has accepted the value.
 */

export interface JsonLimits {
  /** Deepest nesting of arrays and objects; the top-level container is depth 1. */
  readonly maxDepth: number;
  /** Most arrays, objects and primitive values in total. Unlimited when absent. */
  readonly maxNodes?: number;
}

/** Why a value was refused, in words that fit an error message. Undefined: within the limits. */
export function checkJsonLimits(value: unknown, limits: JsonLimits): string | undefined {
  const maxNodes = limits.maxNodes ?? Infinity;
  let nodes = 0;
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    nodes++;
    if (nodes > maxNodes) return `more than ${maxNodes} values`;
    const current = item.value;
    if (typeof current !== 'object' || current === null) continue;
    const depth = item.depth + 1;
    if (depth > limits.maxDepth) return `nesting deeper than ${limits.maxDepth} levels`;
    const children: unknown[] = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) stack.push({ value: child, depth });
  }
  return undefined;
}
