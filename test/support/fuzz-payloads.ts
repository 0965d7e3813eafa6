/**
 * fast-check arbitraries of hostile payloads for the topics the agent consumes: raw bytes, text that is not
 * JSON, arbitrary JSON, and — most of all — mutations of valid messages: fields set to values of the wrong
 * type, `null`, ~500 KB strings (ASCII, 2-byte and 4-byte UTF-8), 1000-level nesting, unicode, removed
 * fields, extra keys, then possibly truncated JSON or invalid UTF-8 bytes spliced in.
 */
import fc from 'fast-check';

type JsonObject = Record<string, unknown>;

/** `[[[…]]]` or `{"d":{"d":…}}`, `levels` deep. */
export function deeplyNested(levels: number, kind: 'array' | 'object'): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < levels; i++) value = kind === 'array' ? [value] : { d: value };
  return value;
}

/** A string of about `bytes` UTF-8 bytes made of `char`. */
export function hugeString(char: string, bytes = 500_000): string {
  return char.repeat(Math.floor(bytes / Buffer.byteLength(char, 'utf8')));
}

/** Values to put where a field was. */
export const weirdValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, 1e308, '', [], {}, ['a'], { a: 'b' }) },
  { weight: 1, arbitrary: fc.constantFrom<'array' | 'object'>('array', 'object').map((kind) => deeplyNested(1000, kind)) },
  { weight: 1, arbitrary: fc.constantFrom('a', 'é', '\u{1F600}').map((c) => hugeString(c)) },
);

type Path = (string | number)[];

/** Paths to every value at most two levels down (`["history", 0, "thought"]` counts as two below the top). */
function pathsOf(value: unknown, depth = 0, prefix: Path = []): Path[] {
  if (depth > 2 || typeof value !== 'object' || value === null) return [];
  const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return entries.flatMap(([key, child]) => [[...prefix, key], ...pathsOf(child, depth + 1, [...prefix, key])]);
}

function parentOf(root: unknown, path: Path): Record<string | number, unknown> | undefined {
  let node: unknown = root;
  for (const key of path.slice(0, -1)) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return typeof node === 'object' && node !== null ? (node as Record<string | number, unknown>) : undefined;
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  op: fc.constantFrom<Mutation['op']>('set', 'set', 'delete', 'add'),
  at: fc.nat(),
  key: fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'id', 'error', 'question')),
  value: weirdValue,
});

const textMutation = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'none' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('bytes' as const),
      at: fc.nat(),
      bytes: fc.constantFrom([0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0x80], [0xfe, 0xff], [0xf8, 0x88, 0x80, 0x80, 0x80]),
    }),
  },
);

/** One change to a message: at the `at`-th of its paths (modulo how many), or a new top-level `key`. */
export interface Mutation {
  op: 'set' | 'delete' | 'add';
  at: number;
  key: string;
  value: unknown;
}

/** A copy of `base` with `mutations` applied in turn; `base` and the mutations' values are left as they were. */
export function mutate(base: JsonObject, mutations: readonly Mutation[]): JsonObject {
  const message = structuredClone(base);
  for (const m of mutations) {
    // A copy of the value: fast-check hands out the same instance of a constant (`{ a: 'b' }`, `['a']`) each time
    // it is drawn, and setting one inside the other made a circle that JSON.stringify cannot write.
    const value = structuredClone(m.value);
    const paths = pathsOf(message);
    const path = paths.length > 0 ? paths[m.at % paths.length] : undefined;
    if (m.op === 'add' || !path) {
      // An extra key, defined as own data (so `__proto__` really is a key in the JSON).
      Object.defineProperty(message, m.key, { value, enumerable: true, writable: true, configurable: true });
      continue;
    }
    const parent = parentOf(message, path);
    const key = path.at(-1) as string | number;
    if (!parent) continue;
    if (m.op === 'delete') {
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete parent[key];
    } else {
      parent[key] = value;
    }
  }
  return message;
}

/** Valid messages (as JSON objects), mutated, serialised, possibly broken at the byte level. */
export function mutatedMessage(bases: readonly JsonObject[]): fc.Arbitrary<Buffer> {
  return fc
    .record({
      base: fc.constantFrom(...bases),
      mutations: fc.array(mutation, { maxLength: 3 }),
      text: textMutation,
    })
    .map(({ base, mutations, text }) => {
      let bytes = Buffer.from(JSON.stringify(mutate(base, mutations)), 'utf8');
      if (text.kind === 'truncate') bytes = bytes.subarray(0, text.at % Math.max(1, bytes.length));
      if (text.kind === 'bytes') {
        const at = text.at % (bytes.length + 1);
        bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(text.bytes), bytes.subarray(at)]);
      }
      return bytes;
    });
}

/** Anything at all: mutated valid messages most of the time, else bytes, text or arbitrary JSON. */
export function hostilePayload(bases: readonly JsonObject[]): fc.Arbitrary<Buffer> {
  return fc.oneof(
    { weight: 6, arbitrary: mutatedMessage(bases) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 300 }).map((text) => Buffer.from(text, 'utf8')) },
    { weight: 1, arbitrary: fc.json({ maxDepth: 4 }).map((text) => Buffer.from(text, 'utf8')) },
  );
}

/** Whether the WebSocket transport can carry this payload (1 MiB text frames; base64 adds a third). */
export function fitsInFrame(payload: Buffer, limitBytes = 1_048_576): boolean {
  return Math.ceil(payload.length / 3) * 4 + 512 <= limitBytes;
}
