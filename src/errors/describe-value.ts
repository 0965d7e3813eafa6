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

/** Most names a message lists before it says how many more there are. */
export const MAX_LISTED = 10;

/**
 * Names as a message lists them, each quoted: `"a", "b", "c"`; past `max`, the first `max` and `and 12 more`,
 * so a message about thousands of names stays a line. `total`: how many there are when `names` holds only the
 * first of them.
 */
export function quoteList(names: readonly string[], max = MAX_LISTED, total = names.length): string {
  return listText(names.slice(0, max).map((name) => quote(name)), max, total);
}

/** Phrases joined with commas, at most `max` of them, then `and 12 more`. */
export function listText(items: readonly string[], max = MAX_LISTED, total = items.length): string {
  const shown = items.slice(0, max);
  return total > shown.length ? [...shown, `and ${total - shown.length} more`].join(', ') : shown.join(', ');
}
