/**
 * Decoding of one config value. TrustGraph's config service holds every value as a JSON string; an
 * already-decoded object is accepted too (handy for tests and for config clients that decode early).
 * A value over the size or depth limit is refused here, before anything walks it.
 */
import { checkJsonLimits } from '../../wire/index.js';
import { describeValue, errorMessage } from '../../errors/index.js';
import type { ProblemDetail } from './problems.js';

/** Largest config value (JSON text) accepted for one tool, tool service or MCP entry. */
export const MAX_CONFIG_VALUE_CHARS = 1_048_576;
/** Deepest nesting accepted in one config value; real tool values nest 4 or 5 levels. */
export const MAX_CONFIG_VALUE_DEPTH = 64;
/** Most JSON values (objects, arrays, strings, numbers, ...) accepted in one config value. */
export const MAX_CONFIG_VALUE_NODES = 100_000;

export type DecodedEntry = { ok: true; value: Record<string, unknown> } | { ok: false; detail: ProblemDetail };

export function decodeEntry(raw: unknown): DecodedEntry {
  let value: unknown = raw;
  if (typeof raw === 'string') {
    if (raw.length > MAX_CONFIG_VALUE_CHARS) {
      return { ok: false, detail: { message: `value is ${raw.length} characters, over the limit of ${MAX_CONFIG_VALUE_CHARS}; left out` } };
    }
    try {
      value = JSON.parse(raw) as unknown;
    } catch (error) {
      return { ok: false, detail: { message: `invalid JSON: ${errorMessage(error)}` } };
    }
  } else if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { ok: false, detail: { message: `expected a JSON string holding an object, got ${describeValue(raw)}` } };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, detail: { message: `expected a JSON object, got ${describeValue(value)}` } };
  }
  const overLimit = checkJsonLimits(value, { maxDepth: MAX_CONFIG_VALUE_DEPTH, maxNodes: MAX_CONFIG_VALUE_NODES });
  if (overLimit !== undefined) return { ok: false, detail: { message: `value has ${overLimit}; left out` } };
  return { ok: true, value: value as Record<string, unknown> };
}

/** The `name` of an entry, when it is a string (for locating problems). */
export function entryName(entry: Record<string, unknown>): string | undefined {
  const name = entry.name;
  return typeof name === 'string' ? name : undefined;
}
