/**
 * Building blocks shared by the TrustGraph schema modules: tolerant zod field types that mirror Python dataclass
 * defaults, and `defineMessage`, which turns a message schema into a `Codec` plus a `make` helper.
 *
 * Field rules (TrustGraph's dataclass (de)serialiser keeps unknown keys out, fills missing keys with defaults and
 * passes `null` through; Python services routinely send `null` for strings and lists):
 * - every field accepts `null` or a missing key and yields the dataclass default;
 * - unknown keys are stripped;
 * - a value of the wrong JSON type is rejected with the field path (`history[0].thought`).
 */
import { z } from 'zod';
import { clipText, errorMessage, InvalidUseError } from '../errors/index.js';
import type { Codec } from './codec.js';
import { WireDecodeError } from './errors.js';
import { pythonJsonBytes, pythonJsonDumps } from './python-repr.js';

/** Deepest JSON nesting a payload may have; deeper payloads are rejected before validation. */
export const MAX_NESTING_DEPTH = 100;

/** A JSON object of unknown shape (e.g. `TextCompletionRequest.schema`). */
export type JsonObject = { [key: string]: unknown };

/** `str` field; `null` or missing → `dflt`. */
export const str = (dflt = '') => z.string().nullish().transform((v): string => v ?? dflt);

/** `str | None` field; missing → `null`. */
export const optStr = () => z.string().nullish().transform((v): string | null => v ?? null);

/**
 * `str` field whose `null` is kept, where TrustGraph echoes a received `null` back (the orchestrator's plan steps
 * carry the request's `state` on as it came); missing → `dflt`.
 */
export const strKeepingNull = (dflt = '') => z.string().nullish().transform((v): string | null => (v === undefined ? dflt : v));

/** `bool` field; `null` or missing → `dflt`. */
export const bool = (dflt = false) => z.boolean().nullish().transform((v): boolean => v ?? dflt);

/** `int` / `float` field; `null` or missing → `dflt`. Any JSON number is accepted (Python does not check). */
export const num = (dflt = 0) => z.number().nullish().transform((v): number => v ?? dflt);

/** `int | None` field; missing → `null`. */
export const optNum = () => z.number().nullish().transform((v): number | null => v ?? null);

/** `list[X]` field; `null` or missing → `[]`. */
export const list = <T extends z.ZodType>(item: T) =>
  z.array(item).nullish().transform((v): z.output<T>[] => v ?? []);

/** `dict[str, X]` field; `null` or missing → `{}`. */
export const dict = <T extends z.ZodType>(value: T) =>
  z.record(z.string(), value).nullish().transform((v): Record<string, z.output<T>> => v ?? {});

/** `dict[str, str]` field; `null` values inside become `""`. */
export const strMap = () => dict(str());

/** `X | None` field holding a nested record; missing → `null`. */
export const optRecord = <T extends z.ZodType>(schema: T) =>
  schema.nullish().transform((v): z.output<T> | null => v ?? null);

/** `dict | None` field of arbitrary JSON; missing → `null`. */
export const optJsonObject = () =>
  z.record(z.string(), z.unknown()).nullish().transform((v): JsonObject | null => v ?? null);

export interface MessageDefinition<T, I> {
  readonly name: string;
  readonly schema: z.ZodType<T, I>;
  readonly codec: Codec<T>;
  /** Full message from partial input: absent fields take the TrustGraph defaults. Throws TypeError on bad input. */
  make(input?: I): T;
  /**
   * A message the caller built already normalised — every field present, in schema order, with its output
   * type (e.g. the defaults of `make()` spread under typed fields) — taken as it is, without running zod. For
   * messages built on every iteration from typed values; `encode` treats it like one from `make` (under the
   * test runner it validates it and fails if zod would have written other bytes).
   */
  trust(value: T): T;
  /**
   * `trust` of `fields` over `make()`'s defaults (frozen, nested lists and maps too): for a message built on
   * every iteration from fields already in their output form, without running zod over it.
   */
  of(fields: Partial<T>): T;
}

/** Wire up a message schema: codec (Python-`json.dumps` encoding, tolerant decoding) and defaults helper. */
export function defineMessage<T, I>(name: string, schema: z.ZodType<T, I>): MessageDefinition<T, I> {
  const normalise = (value: unknown, what: string): T => {
    const result = schema.safeParse(value, { reportInput: true });
    if (!result.success) throw new InvalidUseError(`Cannot ${what} ${name}: ${describeIssues(result.error.issues)}`);
    return result.data;
  };
  /** Messages `make` returned: already valid and normalised, so `encode` need not run zod over them again. */
  const made = new WeakSet<object>();
  const codec: Codec<T> = {
    name,
    encode(value: T): Buffer {
      if (typeof value === 'object' && value !== null && made.has(value)) {
        const payload = pythonJsonBytes(value);
        if (CHECK_MADE_VALUES) assertUnchanged(name, payload.toString('latin1'), pythonJsonDumps(normalise(value, 'encode')));
        return payload;
      }
      return pythonJsonBytes(normalise(value, 'encode'));
    },
    decode(payload: Buffer | string): T {
      try {
        return decodePayload(name, schema, payload);
      } catch (error) {
        if (error instanceof WireDecodeError) throw error;
        // Never let anything but a WireDecodeError escape (e.g. a RangeError from an unexpected deep structure).
        throw new WireDecodeError(name, `unexpected failure: ${truncate(errorMessage(error))}`, { cause: error });
      }
    },
  };
  const make = (input?: I): T => {
    const value = normalise(input ?? {}, 'make');
    if (typeof value === 'object' && value !== null) made.add(value);
    return value;
  };
  const trust = (value: T): T => {
    if (typeof value === 'object' && value !== null) made.add(value);
    return value;
  };
  let defaults: T | undefined;
  return {
    name,
    schema,
    codec,
    make,
    trust,
    of: (fields: Partial<T>) => trust({ ...(defaults ??= frozenDefaults(make())), ...fields }),
  };
}

/** A message of defaults, shared by every `of()`: frozen with the lists and maps it holds. */
function frozenDefaults<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const field of Object.values(value)) if (typeof field === 'object' && field !== null) Object.freeze(field);
  }
  return Object.freeze(value);
}

/**
 * Under the test runner, `encode` still validates what `make` (or `trust`) returned and fails if that changes
 * the bytes: a message from `make` must not be changed in place before it is encoded (copy it:
 * `{ ...message, field }`), and one given to `trust` must be exactly what zod would make of it.
 */
const CHECK_MADE_VALUES = process.env.VITEST !== undefined;

function assertUnchanged(name: string, fast: string, validated: string): void {
  if (fast !== validated) {
    throw new InvalidUseError(
      `A ${name} from make() was changed in place before encode(), or one given to trust() was not normalised; ` +
        'copy it ({ ...message, field }) or build it with make() instead',
    );
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decodePayload<T, I>(name: string, schema: z.ZodType<T, I>, payload: unknown): T {
  let text: string;
  if (typeof payload === 'string') {
    text = payload;
  } else if (payload instanceof Uint8Array) {
    try {
      text = utf8.decode(payload);
    } catch (error) {
      throw new WireDecodeError(name, 'payload is not valid UTF-8', { cause: error });
    }
  } else {
    throw new WireDecodeError(name, `payload must be a Buffer or a string, got ${jsonTypeName(payload)}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new WireDecodeError(name, `invalid JSON: ${truncate(errorMessage(error))}`, { cause: error });
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new WireDecodeError(name, `expected a JSON object, got ${jsonTypeName(data)}`);
  }
  const tooDeep = findTooDeep(data, MAX_NESTING_DEPTH);
  if (tooDeep !== undefined) {
    throw new WireDecodeError(name, `field "${tooDeep}": nesting deeper than ${MAX_NESTING_DEPTH} levels`);
  }
  const result = schema.safeParse(data, { reportInput: true });
  if (!result.success) throw new WireDecodeError(name, describeIssues(result.error.issues), { cause: result.error });
  return result.data;
}

/** Path of the first value nested deeper than `limit` containers, or undefined. Iterative: no stack overflow. */
function findTooDeep(root: object, limit: number): string | undefined {
  interface Frame { value: object; depth: number; key: PropertyKey; parent: Frame | undefined }
  const pathOf = (frame: Frame): PropertyKey[] => {
    const path: PropertyKey[] = [];
    for (let f: Frame | undefined = frame; f?.parent; f = f.parent) path.unshift(f.key);
    return path;
  };
  const stack: Frame[] = [{ value: root, depth: 1, key: '', parent: undefined }];
  for (let frame = stack.pop(); frame; frame = stack.pop()) {
    if (frame.depth > limit) return formatPath(pathOf(frame));
    const { value } = frame;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const child: unknown = value[i];
        if (typeof child === 'object' && child !== null) {
          stack.push({ value: child, depth: frame.depth + 1, key: i, parent: frame });
        }
      }
    } else {
      for (const key of Object.keys(value)) {
        const child: unknown = (value as Record<string, unknown>)[key];
        if (typeof child === 'object' && child !== null) {
          stack.push({ value: child, depth: frame.depth + 1, key, parent: frame });
        }
      }
    }
  }
  return undefined;
}

/** `history[0].arguments.x`; keys that are not identifiers are quoted: `config["a b"]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$-]*$/.test(key)) out += out ? `.${key}` : key;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out || '(root)';
}

/** `null`, `array`, `object`, `string`, `number`, `boolean`, … */
export function jsonTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

const EXPECTED_NAMES: Record<string, string> = { record: 'object', map: 'object' };

function describeIssue(issue: z.core.$ZodIssue, prefix: readonly PropertyKey[] = []): string {
  const path = [...prefix, ...issue.path];
  const where = `field "${formatPath(path)}"`;
  if (issue.code === 'invalid_type') {
    return `${where}: expected ${EXPECTED_NAMES[issue.expected] ?? issue.expected}, got ${jsonTypeName(issue.input)}`;
  }
  if (issue.code === 'invalid_union') {
    // Report the alternative that got furthest into the value (e.g. `group[0]` for a list with a non-string);
    // if none got past the top, list what would have been accepted.
    const firsts = issue.errors.map((branch) => branch[0]).filter((i): i is z.core.$ZodIssue => i !== undefined);
    const deepest = firsts.reduce<z.core.$ZodIssue | undefined>(
      (best, i) => (i.path.length > (best?.path.length ?? 0) ? i : best),
      undefined,
    );
    if (deepest) return describeIssue(deepest, path);
    const expected = firsts.flatMap((i) => (i.code === 'invalid_type' ? [EXPECTED_NAMES[i.expected] ?? i.expected] : []));
    if (expected.length === firsts.length && expected.length > 0) {
      return `${where}: expected ${expected.join(' or ')}, got ${jsonTypeName(issue.input)}`;
    }
  }
  return `${where}: ${truncate(issue.message)}`;
}

function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  const [first, ...rest] = issues;
  if (!first) return 'invalid value';
  const more = rest.length > 0 ? ` (and ${rest.length} more problem${rest.length === 1 ? '' : 's'})` : '';
  return describeIssue(first) + more;
}

function truncate(text: string): string {
  return clipText(text, 200);
}
