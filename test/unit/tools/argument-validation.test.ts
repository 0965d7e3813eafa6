// MA-1..MA-6 (docs/requirements.md), design decision 8 (docs/design.md): declared arguments, their prompt form, and the compiled validator.
import { describe, expect, it } from 'vitest';
import { compileArguments, type ArgumentValidation, type ToolArgument } from '../../../src/tools/arguments/arguments.js';
import { BUILTIN_ARGUMENTS } from '../../../src/tools/arguments/builtin-arguments.js';
import { registryOf } from '../../support/registry-fixtures.js';

const arg = (name: string, type: ToolArgument['type'], required = true): ToolArgument => ({
  name,
  type,
  description: `the ${name}`,
  required,
});

function valueOf(result: ArgumentValidation): Readonly<Record<string, unknown>> {
  if (!result.ok) throw new Error(`expected success, got ${JSON.stringify(result.errors)}`);
  return result.value;
}

function errorsOf(result: ArgumentValidation): string[] {
  if (result.ok) throw new Error(`expected failure, got ${JSON.stringify(result.value)}`);
  return result.errors.map((error) => error.message);
}

describe('coercion of each type', () => {
  const cases: [ToolArgument['type'], unknown, unknown][] = [
    ['string', 'abc', 'abc'],
    ['string', '', ''],
    ['string', 12, '12'],
    ['string', true, 'true'],
    ['number', 1.5, 1.5],
    ['number', '1.5', 1.5],
    ['number', ' -2e3 ', -2000],
    ['number', '12', 12],
    ['integer', 12, 12],
    ['integer', '12', 12],
    ['integer', '12.0', 12],
    ['integer', '-7', -7],
    ['boolean', true, true],
    ['boolean', 'true', true],
    ['boolean', 'false', false],
    ['boolean', 'True', true],
    ['boolean', 'False', false],
    ['object', { a: 1 }, { a: 1 }],
    ['object', '{"a": [1, 2]}', { a: [1, 2] }],
    ['array', [1, 'x'], [1, 'x']],
    ['array', '["a", "b"]', ['a', 'b']],
  ];
  it.each(cases)('%s accepts %j as %j', (type, input, expected) => {
    const validator = compileArguments([arg('x', type)]);
    expect(valueOf(validator.validate({ x: input }))).toEqual({ x: expected });
  });

  const rejected: [ToolArgument['type'], unknown, string][] = [
    ['string', { a: 1 }, 'argument "x" must be a string, got an object'],
    ['string', [1], 'argument "x" must be a string, got a list'],
    ['number', 'abc', 'argument "x" must be a number, got "abc"'],
    ['number', '0x10', 'argument "x" must be a number, got "0x10"'],
    ['number', true, 'argument "x" must be a number, got true'],
    ['number', 'Infinity', 'argument "x" must be a number, got "Infinity"'],
    ['integer', 'abc', 'argument "x" must be an integer, got "abc"'],
    ['integer', 1.5, 'argument "x" must be an integer, got 1.5'],
    ['integer', '12.5', 'argument "x" must be an integer, got "12.5"'],
    ['boolean', 'yes', 'argument "x" must be a boolean (true or false), got "yes"'],
    ['boolean', 1, 'argument "x" must be a boolean (true or false), got 1'],
    ['object', '[1]', 'argument "x" must be a JSON object, got "[1]"'],
    ['object', 'not json', 'argument "x" must be a JSON object, got "not json"'],
    ['array', '{"a": 1}', 'argument "x" must be a JSON list, got "{\\"a\\": 1}"'],
    ['array', 5, 'argument "x" must be a JSON list, got 5'],
  ];
  it.each(rejected)('%s rejects %j', (type, input, message) => {
    const result = compileArguments([arg('x', type)]).validate({ x: input });
    expect(errorsOf(result)).toEqual([message]);
    expect(!result.ok && result.errors[0]!.argument).toBe('x');
  });
});

describe('required and optional arguments', () => {
  const validator = compileArguments([arg('account_id', 'string'), arg('limit', 'integer', false)]);

  it('a missing required argument is named', () => {
    expect(errorsOf(validator.validate({}))).toEqual(['argument "account_id" is required']);
    expect(errorsOf(validator.validate({ account_id: null }))).toEqual(['argument "account_id" is required']);
  });

  it('a missing optional argument is fine and stays absent', () => {
    expect(valueOf(validator.validate({ account_id: 'A1' }))).toEqual({ account_id: 'A1' });
    expect(valueOf(validator.validate({ account_id: 'A1', limit: null }))).toEqual({ account_id: 'A1' });
    expect(valueOf(validator.validate({ account_id: 'A1', limit: '' }))).toEqual({ account_id: 'A1' });
  });

  it('reports every bad argument at once, in declaration order', () => {
    expect(errorsOf(validator.validate({ limit: 'abc' }))).toEqual([
      'argument "account_id" is required',
      'argument "limit" must be an integer, got "abc"',
    ]);
  });

  it('required defaults to true in configuration', () => {
    const { registry } = registryOf({
      a: {
        type: 'mcp-tool',
        name: 'balance',
        'mcp-tool': 'bank',
        arguments: [
          { name: 'account_id', type: 'string', description: 'Bank account identifier' },
          { name: 'currency', type: 'string', required: false },
        ],
      },
    });
    expect(registry.tools[0]!.arguments).toEqual([
      { name: 'account_id', type: 'string', description: 'Bank account identifier', required: true },
      { name: 'currency', type: 'string', description: '', required: false },
    ]);
    expect(errorsOf(registry.tools[0]!.validator.validate({ currency: 'EUR' }))).toEqual(['argument "account_id" is required']);
  });
});

describe('undeclared arguments and odd Args values', () => {
  const validator = compileArguments([arg('q', 'string')]);

  it('pass undeclared arguments through, with a warning', () => {
    const result = validator.validate({ q: 'x', extra: 5 });
    expect(valueOf(result)).toEqual({ q: 'x', extra: 5 });
    expect(result.warnings).toEqual([
      { argument: 'extra', message: 'argument "extra" is not declared by the tool' },
    ]);
  });

  it('a tool without declared arguments accepts anything, without warnings', () => {
    const open = compileArguments([]);
    const result = open.validate({ anything: [1], at: 'all' });
    expect(valueOf(result)).toEqual({ anything: [1], at: 'all' });
    expect(result.warnings).toEqual([]);
    expect(valueOf(open.validate(null))).toEqual({});
  });

  it('Args that is not an object is rejected as a whole', () => {
    const result = validator.validate(['q']);
    expect(errorsOf(result)).toEqual(['arguments must be a JSON object of name → value, got a list']);
    expect(!result.ok && result.errors[0]!.argument).toBeNull();
  });

  it('Args given as JSON text of an object is accepted', () => {
    expect(valueOf(validator.validate('{"q": "x"}'))).toEqual({ q: 'x' });
  });

  it('keeps a "__proto__" argument as a plain key', () => {
    const value = valueOf(validator.validate(JSON.parse('{"q": "x", "__proto__": {"polluted": true}}')));
    expect(Object.keys(value)).toEqual(['q', '__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('does not modify the input', () => {
    const input = { q: 12 };
    valueOf(validator.validate(input));
    expect(input).toEqual({ q: 12 });
  });
});

describe('arguments per tool type', () => {
  const { registry } = registryOf({
    kq: { type: 'knowledge-query', name: 'kq' },
    tc: { type: 'text-completion', name: 'tc' },
    sq: { type: 'structured-query', name: 'sq' },
    re: { type: 'row-embeddings-query', name: 're', 'schema-name': 's' },
    mcp: { type: 'mcp-tool', name: 'mcp', 'mcp-tool': 'srv' },
    pr: { type: 'prompt', name: 'pr', template: 't', arguments: [{ name: 'topic', type: 'string', description: 'Topic' }] },
  });

  it('built-in types have their fixed argument', () => {
    expect(registry.get('kq')!.arguments).toEqual(BUILTIN_ARGUMENTS['knowledge-query']);
    expect(registry.get('kq')!.arguments).toEqual([
      { name: 'question', type: 'string', description: 'The question to ask the knowledge base', required: true },
    ]);
    expect(registry.get('tc')!.arguments[0]!.description).toBe('The text prompt or question for completion');
    expect(registry.get('sq')!.arguments[0]!.description).toBe(
      'Natural language question about structured data (tables, databases, etc.)',
    );
    expect(registry.get('re')!.arguments).toEqual([
      {
        name: 'query',
        type: 'string',
        description: 'Text to search for semantically similar values in the structured data index',
        required: true,
      },
    ]);
  });

  it('built-in validators are shared, configured ones compiled per tool at build time', () => {
    const { registry: other } = registryOf({ kq: { type: 'knowledge-query', name: 'kq2' } });
    expect(other.get('kq2')!.validator).toBe(registry.get('kq')!.validator);
    expect(errorsOf(registry.get('kq')!.validator.validate({}))).toEqual(['argument "question" is required']);
  });

  it('an MCP tool without arguments keeps working (MA-4)', () => {
    const tool = registry.get('mcp')!;
    expect(tool.arguments).toEqual([]);
    expect(tool.prompt.arguments).toEqual([]);
    expect(valueOf(tool.validator.validate({ whatever: 1 }))).toEqual({ whatever: 1 });
  });

  it('the prompt form is {name, description, arguments: [{name, type, description, required}]}', () => {
    expect(registry.get('pr')!.prompt).toEqual({
      name: 'pr',
      description: null,
      arguments: [{ name: 'topic', type: 'string', description: 'Topic', required: true }],
    });
    expect(Object.keys(registry.get('pr')!.prompt.arguments[0]!)).toEqual(['name', 'type', 'description', 'required']);
  });
});
