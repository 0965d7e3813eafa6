// design decision 9 (docs/design.md): an MCP tool's input schema → prompt arguments and an ajv validator with the
// declared-argument interface (`validate(args)` → `{ok, value | errors, warnings}`).
import { describe, expect, it } from 'vitest';
import { SchemaCompiler, type DiscoveredSchema } from '../../../src/mcp/schema-arguments.js';
import type { ArgumentValidation } from '../../../src/tools/arguments/arguments.js';

const SEARCH_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: {
    query: { type: 'string', description: 'What to search for' },
    limit: { type: 'integer', minimum: 1, description: 'Maximum hits' },
    mode: { type: 'string', enum: ['fast', 'exact'], description: 'Search mode' },
    filter: {
      type: 'object',
      description: 'Narrow the search',
      properties: {
        since: { type: 'string', description: 'ISO date' },
        tags: { type: 'array', items: { type: 'string' } },
      },
      required: ['since'],
      additionalProperties: false,
    },
    sources: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } },
    verbose: { type: 'boolean' },
  },
  required: ['query', 'mode'],
};

function compiled(schema: unknown, compiler = new SchemaCompiler()): DiscoveredSchema {
  const result = compiler.compile(schema);
  if (!result.ok) throw new Error(`expected a usable schema: ${result.message}`);
  return result.schema;
}

function valueOf(result: ArgumentValidation): Readonly<Record<string, unknown>> {
  if (!result.ok) throw new Error(`expected success, got ${JSON.stringify(result.errors)}`);
  return result.value;
}

function errorsOf(result: ArgumentValidation): { argument: string | null; message: string }[] {
  if (result.ok) throw new Error(`expected failure, got ${JSON.stringify(result.value)}`);
  return result.errors.map((e) => ({ argument: e.argument, message: e.message }));
}

describe('prompt arguments from an input schema', () => {
  const schema = compiled(SEARCH_SCHEMA);

  it('lists every top-level property in schema order as {name, type, description, required}', () => {
    expect(schema.arguments.map((a) => [a.name, a.type, a.required])).toEqual([
      ['query', 'string', true],
      ['limit', 'integer', false],
      ['mode', 'string', true],
      ['filter', 'object', false],
      ['sources', 'array', false],
      ['verbose', 'boolean', false],
    ]);
    for (const argument of schema.arguments) expect(Object.keys(argument)).toEqual(['name', 'type', 'description', 'required']);
  });

  it('takes descriptions from the schema, adds enum values and the shape of nested values', () => {
    const byName = Object.fromEntries(schema.arguments.map((a) => [a.name, a.description]));
    expect(byName.query).toBe('What to search for');
    expect(byName.mode).toBe('Search mode One of: "fast", "exact".');
    expect(byName.filter).toBe('Narrow the search A JSON object with fields: since (string, required), tags (array).');
    expect(byName.sources).toBe('A JSON list of objects with fields: id (integer, required).');
    expect(byName.verbose).toBe('');
  });

  it('resolves local $refs, nullable types, unions and untyped properties', () => {
    const s = compiled({
      type: 'object',
      $defs: { Day: { type: 'string', description: 'A day', enum: ['mon', 'tue'] } },
      properties: {
        day: { $ref: '#/$defs/Day' },
        note: { type: ['string', 'null'] },
        amount: { anyOf: [{ type: 'integer' }, { type: 'number' }] },
        anything: { description: 'Free-form' },
        level: { const: 3 },
      },
    });
    expect(s.arguments).toEqual([
      { name: 'day', type: 'string', description: 'A day One of: "mon", "tue".', required: false },
      { name: 'note', type: 'string', description: '', required: false },
      { name: 'amount', type: 'number', description: '', required: false },
      { name: 'anything', type: 'string', description: 'Free-form Any JSON value.', required: false },
      { name: 'level', type: 'integer', description: 'One of: 3.', required: false },
    ]);
  });

  it('gives no arguments for a schema without properties', () => {
    expect(compiled({ type: 'object' }).arguments).toEqual([]);
    expect(compiled({ type: 'object', properties: {} }).validator.validate({ x: 1 }).ok).toBe(true);
  });
});

describe('validation with ajv', () => {
  const { validator } = compiled(SEARCH_SCHEMA);

  it('accepts a good call, nested values included, and returns the arguments to send', () => {
    const args = { query: 'q', mode: 'fast', filter: { since: '2024-01-01', tags: ['a'] }, sources: [{ id: 3 }] };
    expect(valueOf(validator.validate(args))).toEqual(args);
  });

  it('names a bad nested argument by its path', () => {
    expect(errorsOf(validator.validate({ query: 'q', mode: 'fast', filter: { since: { year: 2024 } } }))).toEqual([
      { argument: 'filter.since', message: 'argument "filter.since" must be a string, got an object' },
    ]);
  });

  it('names missing nested fields, list items and unknown fields of closed objects', () => {
    expect(errorsOf(validator.validate({ query: 'q', mode: 'fast', filter: { tags: ['a', 7, { x: 1 }], extra: 1 } }))).toEqual([
      { argument: 'filter.since', message: 'argument "filter.since" is required' },
      { argument: 'filter.extra', message: 'argument "filter.extra" is not allowed: the tool\'s input schema has no such field' },
      { argument: 'filter.tags[2]', message: 'argument "filter.tags[2]" must be a string, got an object' },
    ]);
    expect(errorsOf(validator.validate({ query: 'q', mode: 'fast', sources: [{ id: 1 }, {}] }))).toEqual([
      { argument: 'sources[1].id', message: 'argument "sources[1].id" is required' },
    ]);
  });

  it('checks enums, required top-level arguments and other keywords', () => {
    expect(errorsOf(validator.validate({ query: 'q', mode: 'slow', limit: 0 }))).toEqual([
      { argument: 'limit', message: 'argument "limit" must be >= 1, got 0' },
      { argument: 'mode', message: 'argument "mode" must be one of "fast", "exact", got "slow"' },
    ]);
    expect(errorsOf(validator.validate({}))).toEqual([
      { argument: 'query', message: 'argument "query" is required' },
      { argument: 'mode', message: 'argument "mode" is required' },
    ]);
  });

  it('refuses arguments that are not an object', () => {
    expect(errorsOf(validator.validate([1, 2]))).toEqual([
      { argument: null, message: 'arguments must be a JSON object of name → value, got a list' },
    ]);
  });

  it('coerces text the way declared arguments are coerced (history replays strings)', () => {
    const value = valueOf(
      validator.validate({ query: 'q', mode: 'fast', limit: '5', verbose: 'True', filter: '{"since": "2024", "tags": ["x"]}', sources: '[{"id": "2"}]' }),
    );
    expect(value).toEqual({ query: 'q', mode: 'fast', limit: 5, verbose: true, filter: { since: '2024', tags: ['x'] }, sources: [{ id: 2 }] });
  });

  it('treats null and blank text of a non-string argument as not given', () => {
    expect(valueOf(validator.validate({ query: 'q', mode: 'fast', limit: null, verbose: ' ' }))).toEqual({ query: 'q', mode: 'fast' });
    expect(errorsOf(validator.validate({ query: 'q', mode: null }))).toEqual([{ argument: 'mode', message: 'argument "mode" is required' }]);
    const nullable = compiled({ type: 'object', properties: { note: { type: ['string', 'null'] } }, required: ['note'] }).validator;
    expect(valueOf(nullable.validate({ note: null }))).toEqual({ note: null });
  });

  it('passes undeclared top-level arguments through with a warning, unless the schema is closed', () => {
    const result = validator.validate({ query: 'q', mode: 'fast', page: 2 });
    expect(valueOf(result)).toEqual({ query: 'q', mode: 'fast', page: 2 });
    expect(result.warnings.map((w) => w.message)).toEqual(['argument "page" is not in the tool\'s input schema']);
    const closed = compiled({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false }).validator;
    expect(errorsOf(closed.validate({ a: 'x', b: 1 }))).toEqual([
      { argument: 'b', message: 'argument "b" is not allowed: the tool\'s input schema has no such field' },
    ]);
  });

  it('folds the branches of a failed anyOf into one issue', () => {
    const { validator: v } = compiled({
      type: 'object',
      properties: { when: { anyOf: [{ type: 'string', format: 'date' }, { type: 'object', properties: { year: { type: 'integer' } }, required: ['year'] }] } },
    });
    expect(errorsOf(v.validate({ when: { month: 3 } }))).toEqual([
      { argument: 'when', message: 'argument "when" matches none of the allowed forms: must be a string, got an object; or argument "when.year" is required' },
    ]);
    expect(v.validate({ when: { year: 2024 } }).ok).toBe(true);
  });

  it('does not let "__proto__" change the prototype of the arguments sent', () => {
    const value = valueOf(validator.validate(JSON.parse('{"query": "q", "mode": "fast", "__proto__": {"polluted": true}}')));
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('does not modify the caller\'s arguments while coercing', () => {
    const args = { query: 'q', mode: 'fast', sources: [{ id: '4' }] };
    valueOf(validator.validate(args));
    expect(args.sources[0]!.id).toBe('4');
  });
});

describe('dialects', () => {
  it('reads draft 2020-12 schemas (prefixItems) and draft-07 schemas (items as a list)', () => {
    const modern = compiled({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { point: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], items: false } },
    });
    expect(errorsOf(modern.validator.validate({ point: [1, 'x'] }))).toEqual([
      { argument: 'point[1]', message: 'argument "point[1]" must be a number, got "x"' },
    ]);
    const old = compiled({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { pair: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }] } } });
    expect(old.validator.validate({ pair: ['a', 2] }).ok).toBe(true);
  });

  it('compiles schemas that reuse one $id side by side', () => {
    const compiler = new SchemaCompiler();
    const a = compiled({ $id: 'https://example.com/same', type: 'object', properties: { a: { type: 'string' } } }, compiler);
    const b = compiled({ $id: 'https://example.com/same', type: 'object', properties: { b: { type: 'integer' } } }, compiler);
    expect(a.validator.validate({ a: 1 }).ok).toBe(true); // 1 → "1"
    expect(b.validator.validate({ b: 'x' }).ok).toBe(false);
  });
});

describe('malformed schemas', () => {
  const compiler = new SchemaCompiler();
  it.each([
    [null, 'the input schema is not a JSON object'],
    [{ type: 'string' }, 'the input schema must have "type": "object", has "string"'],
    [{ type: 'object', properties: [] }, '"properties" of the input schema is not a JSON object'],
    [{ type: 'object', required: 'a' }, '"required" of the input schema is not a list of property names'],
    [{ type: 'object', properties: { a: { type: 'strng' } } }, 'the input schema is not valid JSON Schema (draft-07): schema is invalid'],
    [{ type: 'object', properties: { a: { type: 'string', pattern: '([' } } }, 'the input schema is not valid JSON Schema (draft-07)'],
  ])('%j is refused with a reason', (schema, message) => {
    const result = compiler.compile(schema);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toContain(message);
  });
});

describe('the compile cache', () => {
  it('compiles each distinct schema once', () => {
    const compiler = new SchemaCompiler();
    const first = compiled(SEARCH_SCHEMA, compiler);
    const again = compiled(structuredClone(SEARCH_SCHEMA), compiler);
    expect(again).toBe(first);
    expect(compiler.size).toBe(1);
  });

  it('keeps at most `capacity` schemas, dropping the least recently used', () => {
    const compiler = new SchemaCompiler(2);
    const schema = (name: string) => ({ type: 'object', properties: { [name]: { type: 'string' } } });
    const a = compiled(schema('a'), compiler);
    compiled(schema('b'), compiler);
    expect(compiled(schema('a'), compiler)).toBe(a); // a is now the most recent
    compiled(schema('c'), compiler); // evicts b
    expect(compiler.size).toBe(2);
    expect(compiled(schema('a'), compiler)).toBe(a);
    expect(compiled(schema('b'), compiler).arguments[0]?.name).toBe('b'); // compiled anew
  });

  it('returns frozen results', () => {
    const s = compiled(SEARCH_SCHEMA);
    expect(Object.isFrozen(s)).toBe(true);
    expect(Object.isFrozen(s.inputSchema)).toBe(true);
    expect(Object.isFrozen(s.arguments[0])).toBe(true);
  });
});
