// design decision 9 (docs/design.md): declared arguments (the contract) compared with the server's input schema.
import { describe, expect, it } from 'vitest';
import { compareArguments } from '../../../src/mcp/drift.js';
import { SchemaCompiler } from '../../../src/mcp/schema-arguments.js';
import type { ToolArgument } from '../../../src/tools/arguments/arguments.js';

const arg = (name: string, type: ToolArgument['type'], required = true): ToolArgument => ({ name, type, description: '', required });

function serverProperties(schema: unknown) {
  const result = new SchemaCompiler().compile(schema);
  if (!result.ok) throw new Error(result.message);
  return result.schema.properties;
}

const SERVER = serverProperties({
  type: 'object',
  properties: {
    account: { type: 'string' },
    amount: { type: 'number' },
    limit: { type: 'integer' },
    note: { type: ['string', 'null'] },
    anything: {},
    currency: { type: 'string' },
    trace: { type: 'boolean' },
  },
  required: ['account', 'amount', 'currency'],
});

describe('drift between declared arguments and the server schema', () => {
  it('finds nothing when they agree (an integer is a number; untyped accepts anything)', () => {
    const declared = [arg('account', 'string'), arg('amount', 'integer'), arg('limit', 'integer', false), arg('note', 'string', false), arg('anything', 'object', false), arg('currency', 'string'), arg('trace', 'boolean', false)];
    expect(compareArguments(declared, SERVER)).toEqual([]);
  });

  it('reports missing, retyped, required-ness and extra arguments, declared ones first', () => {
    const declared = [arg('account', 'integer'), arg('amount', 'number', false), arg('limit', 'number', false), arg('gone', 'string')];
    const findings = compareArguments(declared, SERVER);
    expect(findings.map((f) => [f.kind, f.argument, f.declared, f.server])).toEqual([
      ['type', 'account', 'integer', 'string'],
      ['required', 'amount', 'optional', 'required'],
      ['type', 'limit', 'number', 'integer'],
      ['missing', 'gone', 'string', null],
      ['extra', 'note', null, 'string or null, optional'],
      ['extra', 'anything', null, 'any, optional'],
      ['extra', 'currency', null, 'string, required'],
      ['extra', 'trace', null, 'boolean, optional'],
    ]);
    expect(findings[0]!.message).toBe('argument "account" is declared integer but the server\'s input schema says string');
    expect(findings[1]!.message).toBe('argument "amount" is declared optional but the server\'s input schema makes it required');
    expect(findings[3]!.message).toBe('argument "gone" is declared (string) but the server\'s input schema has no such property');
    expect(findings[6]!.message).toBe(
      'the server\'s input schema has a required property "currency" (string) that is not declared; calls will fail until it is declared',
    );
  });
});
