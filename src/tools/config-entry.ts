/**
 * Decoding of one config value. TrustGraph's config service holds every value as a JSON string; an
 * already-decoded object is accepted too (handy for tests and for config clients that decode early).
 */
import { describeValue } from './describe-value.js';
import type { ProblemDetail } from './problems.js';

export type DecodedEntry = { ok: true; value: Record<string, unknown> } | { ok: false; detail: ProblemDetail };

export function decodeEntry(raw: unknown): DecodedEntry {
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw) as unknown;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return { ok: false, detail: { message: `invalid JSON: ${reason}` } };
    }
  } else if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { ok: false, detail: { message: `expected a JSON string holding an object, got ${describeValue(raw)}` } };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, detail: { message: `expected a JSON object, got ${describeValue(value)}` } };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/** The `name` of an entry, when it is a string (for locating problems). */
export function entryName(entry: Record<string, unknown>): string | undefined {
  const name = entry.name;
  return typeof name === 'string' ? name : undefined;
}
