/**
 * Python spellings of JSON values, for byte compatibility with TrustGraph's Python services.
 *
 * - `pythonStr(v)`: what Python's `str()` gives for the value `json.loads` would have produced. The ReAct agent
 *   stringifies every tool argument this way before it stores it in `AgentStep.arguments`.
 * - `pythonRepr(v)`: Python's `repr()` (strings quoted); `str()` of a list or dict uses it for the items.
 * - `pythonJsonDumps(v)`: Python's default `json.dumps` (`", "` / `": "` separators, `ensure_ascii=True`, floats as
 *   Python `repr`). TrustGraph serialises every bus message and every prompt term with it.
 *
 * JavaScript has a single number type, so an integral value is always rendered as a Python `int` (`1`, never `1.0`)
 * unless it is so large that Python's float repr would use an exponent (|x| ≥ 1e16 → `1e+16`); any other value is
 * rendered as a Python `float`.
 */
import { InvalidUseError } from '../errors/index.js';

/** `str()` of a value: strings as they are, everything else as `repr()`. */
export function pythonStr(value: unknown): string {
  return typeof value === 'string' ? value : pythonRepr(value);
}

/** `repr()` of a JSON-like value. Unsupported JS values (functions, symbols, undefined) render as `None`. */
export function pythonRepr(value: unknown): string {
  return reprValue(value, new Set());
}

/** Python's `json.dumps(value)` with default arguments. Non-finite numbers give `NaN` / `Infinity` as Python does. */
export function pythonJsonDumps(value: unknown): string {
  return isPlainJson(value, 0) ? plainJsonDumps(value) : (dumpsValue(value, new Set()) ?? 'null');
}

/** `pythonJsonDumps(value)` as the UTF-8 bytes a bus message carries (all ASCII: `ensure_ascii`). */
export function pythonJsonBytes(value: unknown): Buffer {
  if (isPlainJson(value, 0)) return Buffer.from(plainJsonSpelled(value));
  return Buffer.from(dumpsValue(value, new Set()) ?? 'null', 'latin1');
}

/** Python's `repr(float(x))`: shortest round-trip digits, exponent form when the exponent is < -4 or ≥ 16. */
export function pythonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  // toExponential() without an argument yields the shortest digits that round-trip, like Python's repr.
  const [mantissa = '', expText = '0'] = Math.abs(x).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const exp = Number(expText);
  const decpt = exp + 1; // position of the decimal point relative to the first digit
  if (decpt > 16 || decpt < -3) {
    const rest = digits.slice(1);
    const e = Math.abs(exp).toString().padStart(2, '0');
    return `${sign}${digits[0] ?? '0'}${rest ? `.${rest}` : ''}e${exp < 0 ? '-' : '+'}${e}`;
  }
  if (decpt <= 0) return `${sign}0.${'0'.repeat(-decpt)}${digits}`;
  if (decpt >= digits.length) return `${sign}${digits}${'0'.repeat(decpt - digits.length)}.0`;
  return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
}

/** A JS number as Python would print it after `json.loads`: integral values as `int`, others as `float`. */
export function pythonNumberRepr(x: number): string {
  if (Number.isInteger(x) && Math.abs(x) < 1e16) return Object.is(x, -0) ? '0' : String(x);
  return pythonFloatRepr(x);
}

/** Python's `repr()` of a `str`. */
export function pythonStringRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\t') out += '\\t';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${hex(cp, 2)}`;
    else if (cp < 0x7f) out += ch;
    else if (!NON_PRINTABLE.test(ch)) out += ch;
    else if (cp <= 0xff) out += `\\x${hex(cp, 2)}`;
    else if (cp <= 0xffff) out += `\\u${hex(cp, 4)}`;
    else out += `\\U${hex(cp, 8)}`;
  }
  return out + quote;
}

/**
 * Python's `json.dumps` of a `str` with `ensure_ascii=True`. `JSON.stringify` escapes exactly what Python does
 * below U+007F (`"`, `\\`, `\b \f \n \r \t`, other controls as lowercase `\u00xx`, lone surrogates as `\udxxx`);
 * what is left to do is Python's escape of every other code unit from U+007F up (surrogate pairs as two escapes).
 */
export function pythonJsonString(s: string): string {
  const json = JSON.stringify(s);
  return BEYOND_ASCII.test(json) ? json.replace(BEYOND_ASCII_ALL, escapeCodeUnit) : json;
}

const BEYOND_ASCII = /[^\x00-\x7e]/;
const BEYOND_ASCII_ALL = /[^\x00-\x7e]/g;
const escapeCodeUnit = (unit: string): string => `\\u${hex(unit.charCodeAt(0), 4)}`;

// Python's str.isprintable() is false for these general categories (the ASCII space excepted, handled earlier).
const NON_PRINTABLE = /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$/u;

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function reprValue(value: unknown, seen: Set<object>): string {
  switch (typeof value) {
    case 'string': return pythonStringRepr(value);
    case 'number': return pythonNumberRepr(value);
    case 'bigint': return value.toString();
    case 'boolean': return value ? 'True' : 'False';
    case 'object': break;
    default: return 'None';
  }
  if (value === null) return 'None';
  if (seen.has(value)) return Array.isArray(value) ? '[...]' : '{...}';
  seen.add(value);
  try {
    if (Array.isArray(value)) return `[${value.map((item: unknown) => reprValue(item, seen)).join(', ')}]`;
    const parts = Object.entries(value).map(([k, v]) => `${pythonStringRepr(k)}: ${reprValue(v, seen)}`);
    return `{${parts.join(', ')}}`;
  } finally {
    seen.delete(value);
  }
}

/** `undefined` means "skip" (like JSON.stringify for object members); arrays turn it into `null`. */
function dumpsValue(value: unknown, seen: Set<object>): string | undefined {
  if (isRecord(value) && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  switch (typeof value) {
    case 'string': return pythonJsonString(value);
    case 'number':
      if (Number.isNaN(value)) return 'NaN';
      if (value === Infinity) return 'Infinity';
      if (value === -Infinity) return '-Infinity';
      return pythonNumberRepr(value);
    case 'bigint': return value.toString();
    case 'boolean': return value ? 'true' : 'false';
    case 'object': break;
    default: return undefined;
  }
  if (value === null) return 'null';
  if (seen.has(value)) throw new InvalidUseError('Circular reference in value passed to pythonJsonDumps');
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      if (!sharedArrays.has(value)) return dumpsArray(value, seen);
      const known = sharedJson.get(value);
      if (known === undefined) {
        const json = isPlainJson(value, 0) ? plainJsonDumps(value) : dumpsArray(value, seen);
        sharedJson.set(value, json);
        return json;
      }
      if (CHECK_SHARED_JSON && known !== dumpsArray(value, seen)) {
        throw new InvalidUseError('An array given to dumpJsonOnce() was changed after it was first encoded; build a new one instead');
      }
      return known;
    }
    let out = '{';
    let first = true;
    for (const key of Object.keys(value)) {
      const dumped = dumpsValue((value as Record<string, unknown>)[key], seen);
      if (dumped === undefined) continue;
      out += `${first ? '' : ', '}${keyJson(key)}: ${dumped}`;
      first = false;
    }
    return out + '}';
  } finally {
    seen.delete(value);
  }
}

function dumpsArray(value: readonly unknown[], seen: Set<object>): string {
  let out = '[';
  for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ', ') + (dumpsValue(value[i], seen) ?? 'null');
  return out + ']';
}

/**
 * Arrays whose `pythonJsonDumps` is kept after the first time and reused: an explain step's triples travel in
 * two messages (the explainability topic and the explain response), and are serialised once.
 */
const sharedArrays = new WeakSet<readonly unknown[]>();
const sharedJson = new WeakMap<readonly unknown[], string>();
/** Under the test runner every reuse is checked against a fresh serialisation. */
const CHECK_SHARED_JSON = process.env.VITEST !== undefined;

/**
 * Marks an array that goes into more than one message, so that `pythonJsonDumps` serialises it once. It must
 * not change afterwards (nor what it holds): build a new array instead.
 */
export function dumpJsonOnce<T extends readonly unknown[]>(value: T): T {
  sharedArrays.add(value);
  return value;
}

/**
 * Object keys are mostly the same few field names in every message: their JSON is kept (up to a bound, so
 * keys from payloads cannot grow it without end).
 */
const keyJsonCache = new Map<string, string>();
const MAX_CACHED_KEYS = 1000;

function keyJson(key: string): string {
  const known = keyJsonCache.get(key);
  if (known !== undefined) return known;
  const json = pythonJsonString(key);
  if (keyJsonCache.size < MAX_CACHED_KEYS) keyJsonCache.set(key, json);
  return json;
}

/**
 * The fast path: `JSON.stringify` (native) writes the value, and `pythonSpelling` turns its compact output into
 * `json.dumps`'s. That is exact only for values JSON.stringify and `json.dumps` read alike: no non-finite numbers
 * (JSON.stringify writes `null`), no bigints, no `toJSON` methods, no array given to `dumpJsonOnce` inside (its
 * JSON is reused), not nested deeper than this bound (a circular value must throw the walker's TypeError). Any
 * other value takes the walker (`dumpsValue`).
 */
const MAX_PLAIN_DEPTH = 1000;

function plainJsonDumps(value: unknown): string {
  return plainJsonSpelled(value).toString('latin1');
}

/** The fast path's bytes: a view of the scratch space, valid until the next call. */
function plainJsonSpelled(value: unknown): Buffer {
  const json = (JSON.stringify(value) as string | undefined) ?? 'null';
  const { bytes, length } = pythonSpelling(json);
  return bytes.subarray(0, length);
}

function isPlainJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'number': return Number.isFinite(value);
    case 'bigint': return false;
    case 'object': break;
    default: return true;
  }
  if (value === null) return true;
  if (depth > MAX_PLAIN_DEPTH || (value as { toJSON?: unknown }).toJSON !== undefined) return false;
  if (Array.isArray(value)) {
    if (depth > 0 && sharedArrays.has(value)) return false;
    for (let i = 0; i < value.length; i++) if (!isPlainJson(value[i], depth + 1)) return false;
    return true;
  }
  for (const key in value) if (!isPlainJson((value as Record<string, unknown>)[key], depth + 1)) return false;
  return true;
}

/** Scratch space for `pythonSpelling`, kept for messages up to MAX_SCRATCH_CHARS characters. */
const MAX_SCRATCH_CHARS = 64 * 1024;
/** The most bytes one character of JSON.stringify's output can become (U+0080… → `\uXXXX`). */
const MAX_BYTES_PER_CHAR = 6;
let scratch = Buffer.allocUnsafe(4096);
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');

/**
 * JSON.stringify's compact output rewritten as Python's `json.dumps` writes it, as ASCII bytes: a space after
 * every `,` and `:` outside strings, every code unit from U+007F up escaped as `\uxxxx` (JSON.stringify has
 * escaped all else that Python does), and numbers that Python spells differently (exponents, |x| < 1e-4,
 * integers from 1e16) as `pythonNumberRepr` writes them. The bytes are valid until the next call.
 */
function pythonSpelling(json: string): { bytes: Buffer; length: number } {
  const n = json.length;
  const needed = n * MAX_BYTES_PER_CHAR + 64;
  let b = scratch;
  if (b.length < needed) {
    b = Buffer.allocUnsafe(needed);
    if (n <= MAX_SCRATCH_CHARS) scratch = b;
  }
  let o = 0;
  let i = 0;
  while (i < n) {
    let c = json.charCodeAt(i++);
    if (c === 0x22) {
      b[o++] = c;
      for (;;) {
        c = json.charCodeAt(i++);
        if (c === 0x22) {
          b[o++] = c;
          break;
        }
        if (c === 0x5c) {
          b[o++] = c;
          b[o++] = json.charCodeAt(i++);
        } else if (c < 0x7f) {
          b[o++] = c;
        } else {
          b[o++] = 0x5c;
          b[o++] = 0x75;
          b[o++] = HEX_DIGITS[c >> 12]!;
          b[o++] = HEX_DIGITS[(c >> 8) & 15]!;
          b[o++] = HEX_DIGITS[(c >> 4) & 15]!;
          b[o++] = HEX_DIGITS[c & 15]!;
        }
      }
    } else if (c === 0x2c || c === 0x3a) {
      b[o++] = c;
      b[o++] = 0x20;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const start = i - 1;
      const end = numberEnd(json, i);
      if (spelledByPython(json, start, end)) {
        const python = pythonNumberRepr(Number(json.slice(start, end)));
        for (let k = 0; k < python.length; k++) b[o++] = python.charCodeAt(k);
      } else {
        for (let k = start; k < end; k++) b[o++] = json.charCodeAt(k);
      }
      i = end;
    } else {
      b[o++] = c;
    }
  }
  return { bytes: b, length: o };
}

function numberEnd(json: string, from: number): number {
  let j = from;
  for (; j < json.length; j++) {
    const d = json.charCodeAt(j);
    if (!((d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d)) break;
  }
  return j;
}

/**
 * Whether JavaScript's spelling of this number differs from Python's: an exponent (`1e-7`, `1e+21`), a
 * fraction below 1e-4 (`0.00001`, Python `1e-05`), or an integer of 17 or more digits (Python: a float, `1e+16`).
 */
function spelledByPython(json: string, start: number, end: number): boolean {
  let digits = start;
  if (json.charCodeAt(digits) === 0x2d) digits++;
  let point = false;
  for (let k = digits; k < end; k++) {
    const d = json.charCodeAt(k);
    if (d === 0x65 || d === 0x45) return true;
    if (d === 0x2e) point = true;
  }
  if (point) return json.startsWith('0.0000', digits);
  return end - digits >= 17;
}
