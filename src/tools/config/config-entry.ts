/**
 * Decoding of one config value. TrustGraph's config service holds every value as a JSON string; an
 * already-decoded object is accepted too (handy for tests and for config clients that decode early).
 * A value over the size or depth limit is refused here, before anything walks it.
 */
import { checkJsonLimits } from '../../wire/index.js';
import { describeValue, errorMessage } from '../../errors/index.js';
import { MAX_CONFIG_VALUE_CHARS, MAX_CONFIG_VALUE_DEPTH, MAX_CONFIG_VALUE_NODES } from '../../config/index.js';
import type { ProblemDetail } from './problems.js';

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
