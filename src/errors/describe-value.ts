/**
 * Short, human-readable renderings of JSON values for error messages: `a string ("abc")`, `null`,
 * `a list`, … Long strings are cut so that one bad value cannot flood a log line.
 */

const MAX_SHOWN = 60;

/** `"abc"` (JSON-quoted, cut to a readable length). */
export function quote(text: string): string {
  const shown = text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text;
  return JSON.stringify(shown);
}

/** The value as it would appear in a message: `"abc"`, `12`, `true`, `null`, `an object`, `a list`. */
export function showValue(value: unknown): string {
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return describeValue(value);
}

/** What kind of value this is, with the value itself when short: `a string ("x")`, `a number (3)`. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'string':
      return `a string (${quote(value)})`;
    case 'number':
      return `a number (${String(value)})`;
    case 'boolean':
      return `a boolean (${String(value)})`;
    case 'object':
      return 'an object';
    default:
      return `a ${typeof value}`;
  }
}

/** `arguments[1].type` from a zod-style path `['arguments', 1, 'type']`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out;
}
