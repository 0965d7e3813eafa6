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
  const out = dumpsValue(value, new Set());
  return out ?? 'null';
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
  if (seen.has(value)) throw new TypeError('Circular reference in value passed to pythonJsonDumps');
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      if (!sharedArrays.has(value)) return dumpsArray(value, seen);
      const known = sharedJson.get(value);
      if (known === undefined) {
        const json = dumpsArray(value, seen);
        sharedJson.set(value, json);
        return json;
      }
      if (CHECK_SHARED_JSON && known !== dumpsArray(value, seen)) {
        throw new Error('An array given to dumpJsonOnce() was changed after it was first encoded; build a new one instead');
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
