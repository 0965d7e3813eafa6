/**
 * The model's `Args` value read as an object of name → value, the one way every argument validator reads it
 * (declared arguments and MCP input schemas alike).
 */

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** JSON.parse, or undefined when the text is not JSON. */
export function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The `Args` value as an object; a JSON text of an object is accepted, null means no arguments. */
export function argsObject(args: unknown): Record<string, unknown> | undefined {
  if (args === undefined || args === null) return {};
  if (isPlainObject(args)) return args;
  if (typeof args === 'string') {
    if (args.trim() === '') return {};
    const parsed = parseJsonText(args);
    if (isPlainObject(parsed)) return parsed;
  }
  return undefined;
}
