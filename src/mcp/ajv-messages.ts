/**
 * ajv's validation errors as the agent's argument issues: one sentence per problem, naming the argument
 * by its path inside the model's `Args` (`argument "filter.since" must be a string, got 5`), in the same
 * words the declared-argument validator uses (`src/tools/arguments/arguments.ts`).
 */
import type { ErrorObject } from 'ajv';
import type { ArgumentIssue } from '../tools/index.js';
import { quote, showValue } from '../errors/index.js';

/** At most this many issues per call: enough to fix the call, short enough for an observation. */
export const MAX_ISSUES = 10;

const TYPE_PHRASES: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean (true or false)',
  object: 'a JSON object',
  array: 'a JSON list',
  null: 'null',
};

const IDENTIFIER = /^[A-Za-z_$][\w$-]*$/;

/** JSON pointer (`/filter/tags/0`) → segments. */
function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Segments → `filter.tags[0]`; odd names are bracketed: `filter["a.b"]`. */
export function argumentPath(segments: readonly string[], value: unknown): string {
  let out = '';
  let current = value;
  for (const segment of segments) {
    const inArray = Array.isArray(current);
    if (inArray && /^\d+$/.test(segment)) out += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
    current = current !== null && typeof current === 'object' ? (current as Record<string, unknown>)[segment] : undefined;
  }
  return out;
}

function valueAt(root: unknown, segments: readonly string[]): unknown {
  let current = root;
  for (const segment of segments) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function typePhrase(type: unknown): string {
  const names = Array.isArray(type) ? type : String(type).split(',');
  return names.map((name) => TYPE_PHRASES[String(name)] ?? String(name)).join(' or ');
}

/** The sentence for one error, without the "argument …" prefix. */
function complaint(error: ErrorObject, value: unknown): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'type':
      return `must be ${typePhrase(params.type)}, got ${showValue(value)}`;
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}, got ${showValue(value)}`;
    case 'const':
      return `must be ${JSON.stringify(params.allowedValue)}, got ${showValue(value)}`;
    default:
      return `${error.message ?? 'is invalid'}${value === undefined || typeof value === 'object' ? '' : `, got ${showValue(value)}`}`;
  }
}

interface Rendered {
  readonly issue: ArgumentIssue;
  readonly schemaPath: string;
}

function render(error: ErrorObject, data: unknown): Rendered {
  const segments = pointerSegments(error.instancePath);
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required' || error.keyword === 'additionalProperties') {
    const child = String(error.keyword === 'required' ? params.missingProperty : params.additionalProperty);
    const path = argumentPath([...segments, child], data);
    const message =
      error.keyword === 'required'
        ? `argument ${quote(path)} is required`
        : `argument ${quote(path)} is not allowed: the tool's input schema has no such field`;
    return { issue: { argument: path, message }, schemaPath: error.schemaPath };
  }
  const value = valueAt(data, segments);
  if (segments.length === 0) {
    const message = error.keyword === 'type' ? `arguments must be a JSON object of name → value, got ${showValue(value)}` : `arguments ${complaint(error, value)}`;
    return { issue: { argument: null, message }, schemaPath: error.schemaPath };
  }
  const path = argumentPath(segments, data);
  return { issue: { argument: path, message: `argument ${quote(path)} ${complaint(error, value)}` }, schemaPath: error.schemaPath };
}

/**
 * ajv errors (collected with `allErrors`) → issues, deduplicated and capped. The branches of a failed
 * `anyOf`/`oneOf` are folded into one issue listing what each branch wanted.
 */
export function issuesFromAjv(errors: readonly ErrorObject[] | null | undefined, data: unknown): ArgumentIssue[] {
  if (!errors || errors.length === 0) return [{ argument: null, message: 'arguments do not match the tool\'s input schema' }];
  const rendered = errors.map((error) => ({ error, ...render(error, data) }));
  const unions = rendered.filter((r) => r.error.keyword === 'anyOf' || r.error.keyword === 'oneOf');
  const out: ArgumentIssue[] = [];
  const seen = new Set<string>();
  const push = (issue: ArgumentIssue): void => {
    if (seen.has(issue.message) || out.length >= MAX_ISSUES) return;
    seen.add(issue.message);
    out.push(issue);
  };
  for (const r of rendered) {
    const union = unions.find((u) => u !== r && r.schemaPath.startsWith(`${u.schemaPath}/`));
    if (union !== undefined) continue; // reported with its union
    if (r.error.keyword === 'anyOf' || r.error.keyword === 'oneOf') {
      const branches = rendered.filter((b) => b !== r && b.schemaPath.startsWith(`${r.schemaPath}/`));
      const path = r.issue.argument;
      const subject = path === null ? 'arguments' : `argument ${quote(path)}`;
      const own = `${subject} `;
      const wanted = [...new Set(branches.map((b) => (b.issue.message.startsWith(own) ? b.issue.message.slice(own.length) : b.issue.message)))];
      const params = r.error.params as Record<string, unknown>;
      if (Array.isArray(params.passingSchemas)) {
        push({ argument: path, message: `${subject} matches more than one of the allowed forms; make it match exactly one` });
        continue;
      }
      const detail = wanted.length > 0 ? `: ${wanted.join('; or ')}` : '';
      push({ argument: path, message: `${subject} matches none of the allowed forms${detail}` });
      continue;
    }
    push(r.issue);
  }
  return out;
}
