import { describe, expect, it } from 'vitest';
import { ConfigResponseSchema, configResponseCodec, plainValues } from '../../../src/wire/config.js';
import { defineMessage } from '../../../src/wire/schema-kit.js';

/** The schema's own decoding, which the quicker path must match result for result and error for error. */
const reference = defineMessage('ConfigResponse', ConfigResponseSchema).codec;

function outcome(decode: (payload: Buffer | string) => unknown, payload: Buffer | string): unknown {
  try {
    return { value: decode(payload) };
  } catch (error) {
    return { error: (error as Error).name, message: (error as Error).message };
  }
}

const deep = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);

const payloads: Record<string, string | Buffer> = {
  'a getvalues answer': JSON.stringify({
    version: 7,
    values: [
      { type: 'tool', key: 'a', value: '{"name": "a"}', workspace: '' },
      { type: 'tool', key: 'b', value: '{}', workspace: 'w' },
    ],
    directory: [],
    config: {},
    error: null,
  }),
  'nulls and missing fields in entries': '{"version": 1, "values": [{"type": null, "key": "a", "value": null}, {"key": "b"}, {}]}',
  'no values at all': '{"version": 3}',
  'values null': '{"values": null, "directory": ["x"], "config": {"tool": {"a": "1", "b": null}}}',
  'an error answer': '{"version": 0, "error": {"type": "bad-operation", "message": "no"}}',
  'an unknown field in an entry': '{"values": [{"type": "t", "key": "a", "value": "v", "workspace": "", "extra": [1]}]}',
  'an unknown top-level field': '{"values": [], "extra": 1}',
  'an unknown top-level field nested too deep': `{"values": [], "extra": ${deep(150)}}`,
  'an unknown entry field nested too deep': `{"values": [{"key": "a", "extra": ${deep(150)}}]}`,
  'a value that is a number': '{"values": [{"type": "t", "key": "a", "value": 5, "workspace": ""}]}',
  'a key that is an object': '{"values": [{"type": "t", "key": {"k": 1}}]}',
  'an entry that is a string': '{"values": ["a"]}',
  'an entry that is null': '{"values": [null]}',
  'values an object': '{"values": {"a": "b"}}',
  'version a string': '{"version": "7", "values": []}',
  'config values not strings': '{"values": [], "config": {"tool": {"a": 1}}}',
  'an entry with a __proto__ field': '{"values": [{"key": "a", "__proto__": {"x": 1}}]}',
  'not JSON': '{"values": [',
  'a JSON array': '[1, 2]',
  'a JSON string': '"text"',
  'invalid UTF-8': Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
};

describe('ConfigResponse decoding', () => {
  for (const [name, payload] of Object.entries(payloads)) {
    it(`matches the schema's decoding: ${name}`, () => {
      const expected = outcome((p) => reference.decode(p), payload);
      const actual = outcome((p) => configResponseCodec.decode(p), payload);
      expect(actual).toEqual(expected);
      if (typeof payload === 'string' && 'value' in (expected as object)) {
        // Field order too: the encoder writes what it was given.
        expect(Object.keys((actual as { value: object }).value)).toEqual(Object.keys((expected as { value: object }).value));
        expect(outcome((p) => configResponseCodec.decode(p), Buffer.from(payload))).toEqual(expected);
      }
    });
  }

  it('checks the usual entries itself and leaves every other shape to the schema', () => {
    expect(plainValues([{ type: 't', key: 'a', value: 'v', workspace: '' }, { key: 'b', value: null }])).toEqual([
      { type: 't', key: 'a', value: 'v', workspace: '' },
      { type: '', key: 'b', value: null, workspace: '' },
    ]);
    expect(plainValues(null)).toEqual([]);
    expect(plainValues(undefined)).toEqual([]);
    expect(plainValues({})).toBeUndefined();
    expect(plainValues([{ key: 'a', extra: 1 }])).toBeUndefined();
    expect(plainValues([{ key: 1 }])).toBeUndefined();
    expect(plainValues([[]])).toBeUndefined();
    expect(plainValues(['a'])).toBeUndefined();
    expect(plainValues([{ key: 'a' }, null])).toBeUndefined();
  });

  it('decodes an answer of 10 000 entries to what the schema gives', () => {
    const values = Array.from({ length: 10_000 }, (_, i) => ({ type: 'tool', key: `k${i}`, value: JSON.stringify({ name: `t${i}` }), workspace: '' }));
    const payload = Buffer.from(JSON.stringify({ version: 9, values, directory: [], config: {}, error: null }));
    expect(configResponseCodec.decode(payload)).toEqual(reference.decode(payload));
  });
});
