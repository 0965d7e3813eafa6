import { describe, expect, it } from 'vitest';
import {
  MAX_NESTING_DEPTH,
  WireDecodeError,
  agentRequestCodec,
  agentResponseCodec,
  configPushCodec,
  type Codec,
} from '../../../src/wire/index.js';

function decodeError<T>(codec: Codec<T>, payload: Buffer | string): WireDecodeError {
  try {
    codec.decode(payload);
  } catch (error) {
    expect(error).toBeInstanceOf(WireDecodeError);
    return error as WireDecodeError;
  }
  throw new Error('decode unexpectedly succeeded');
}

describe('decoding garbage', () => {
  it('invalid JSON names the schema and the parse problem', () => {
    const error = decodeError(agentRequestCodec, Buffer.from('{"question": '));
    expect(error.schema).toBe('AgentRequest');
    expect(error.message).toMatch(/^Cannot decode AgentRequest: invalid JSON: /);
    expect(decodeError(agentRequestCodec, '').message).toMatch(/invalid JSON/);
    expect(decodeError(agentRequestCodec, '{"a": 1,}').message).toMatch(/invalid JSON/);
  });

  it.each([
    ['[]', 'array'],
    ['[{"question": "q"}]', 'array'],
    ['42', 'number'],
    ['"question"', 'string'],
    ['null', 'null'],
    ['true', 'boolean'],
  ])('a non-object payload %s is rejected', (payload, type) => {
    expect(decodeError(agentRequestCodec, payload).message).toBe(`Cannot decode AgentRequest: expected a JSON object, got ${type}`);
  });

  it('invalid UTF-8 is rejected', () => {
    const error = decodeError(agentRequestCodec, Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]));
    expect(error.message).toBe('Cannot decode AgentRequest: payload is not valid UTF-8');
  });

  it('a huge non-JSON payload gives a short message', () => {
    const error = decodeError(agentRequestCodec, Buffer.from('x'.repeat(5_000_000)));
    expect(error.message).toMatch(/invalid JSON/);
    expect(error.message.length).toBeLessThan(400);
  });

  it('a huge JSON string payload is rejected as a non-object', () => {
    const error = decodeError(agentRequestCodec, JSON.stringify('y'.repeat(1_000_000)));
    expect(error.message).toBe('Cannot decode AgentRequest: expected a JSON object, got string');
  });

  it('huge but well-typed field values are accepted', () => {
    expect(agentRequestCodec.decode(JSON.stringify({ question: 'z'.repeat(1_000_000) })).question).toHaveLength(1_000_000);
  });

  it('deeply nested payloads are rejected with the path where the limit was crossed', () => {
    const deep = '{"history": [{"arguments": {"x": ' + '['.repeat(200_000) + ']'.repeat(200_000) + '}}]}';
    const error = decodeError(agentRequestCodec, deep);
    expect(error.message).toMatch(new RegExp(`field "history\\[0\\]\\.arguments\\.x(\\[0\\])+": nesting deeper than ${MAX_NESTING_DEPTH} levels`));
  });

  it('deeply nested quoted triples are rejected, not overflowing the stack', () => {
    let term = '{"type": "i", "iri": "urn:x"}';
    for (let i = 0; i < 5_000; i++) term = `{"type": "t", "triple": {"s": ${term}}}`;
    const error = decodeError(agentResponseCodec, `{"explain_triples": [{"s": ${term}}]}`);
    expect(error.message).toMatch(/nesting deeper than/);
  });

  it('nesting up to the limit is fine', () => {
    let term = '{"type": "i", "iri": "urn:x"}';
    for (let i = 0; i < 10; i++) term = `{"type": "t", "triple": {"s": ${term}}}`;
    expect(agentResponseCodec.decode(`{"explain_triples": [{"s": ${term}}]}`).explain_triples).toHaveLength(1);
  });

  it('wrong types name the offending field', () => {
    expect(decodeError(configPushCodec, '{"changes": {"tool": "default"}}').message).toBe(
      'Cannot decode ConfigPush: field "changes.tool": expected array, got string',
    );
    expect(decodeError(configPushCodec, '{"changes": {"processor:agent-manager": [1]}}').message).toBe(
      'Cannot decode ConfigPush: field "changes["processor:agent-manager"][0]": expected string, got number',
    );
    expect(decodeError(configPushCodec, '{"workspace_changes": []}').message).toBe(
      'Cannot decode ConfigPush: field "workspace_changes": expected object, got array',
    );
  });

  it('never throws anything but WireDecodeError, even for non-buffer input', () => {
    const inputs: unknown[] = [undefined, null, 42, {}, [], new Uint8Array([0xc3]), Buffer.alloc(0)];
    for (const input of inputs) {
      expect(() => agentRequestCodec.decode(input as Buffer)).toThrow(WireDecodeError);
    }
  });
});
