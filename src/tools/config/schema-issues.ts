/**
 * Runs a config schema and turns zod issues into `ProblemDetail`s with plain-English messages and
 * field paths (`arguments[1].type`). Schemas carry their own messages where a generic one would be
 * vague; everything else gets the wording below.
 */
import { z } from 'zod';
import { describeValue, formatPath } from '../../errors/index.js';
import type { ProblemDetail } from './problems.js';

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean',
  array: 'a list',
  object: 'an object',
  null: 'null',
};

function expectedPhrase(expected: string | undefined): string {
  return (expected !== undefined && EXPECTED[expected]) || (expected ?? 'something else');
}

/** Generic wording for issues whose schema gave no message of its own. */
const errorMap = (issue: z.core.$ZodRawIssue): string | undefined => {
  switch (issue.code) {
    case 'invalid_type': {
      const expected = expectedPhrase(issue.expected);
      return issue.input === undefined
        ? `required: ${expected}`
        : `expected ${expected}, got ${describeValue(issue.input)}`;
    }
    case 'invalid_value':
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${describeValue(issue.input)}`;
    case 'too_small':
      return issue.origin === 'string'
        ? 'expected a non-empty string'
        : `expected at least ${String(issue.minimum)}, got ${describeValue(issue.input)}`;
    case 'too_big':
      return `expected at most ${String(issue.maximum)}, got ${describeValue(issue.input)}`;
    case 'invalid_format':
      return `has the wrong format, got ${describeValue(issue.input)}`;
    case 'invalid_union':
      return `does not match any allowed form, got ${describeValue(issue.input)}`;
    default:
      return undefined;
  }
};

export type SchemaCheck<T> = { ok: true; data: T } | { ok: false; details: ProblemDetail[] };

/** Validate `value` against `schema`; never throws. */
export function checkAgainst<S extends z.ZodType>(schema: S, value: unknown): SchemaCheck<z.output<S>> {
  const result = schema.safeParse(value, { error: errorMap });
  if (result.success) return { ok: true, data: result.data };
  return {
    ok: false,
    details: result.error.issues.map((issue) => {
      const field = formatPath(issue.path);
      return field === '' ? { message: issue.message } : { field, message: issue.message };
    }),
  };
}
