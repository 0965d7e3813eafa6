import { InvalidUseError } from '../../../src/errors/index.js';
import { describe, expect, it } from 'vitest';
import {
  dumpJsonOnce,
  pythonFloatRepr,
  pythonJsonBytes,
  pythonJsonDumps,
  pythonNumberRepr,
  pythonRepr,
  pythonStr,
  pythonStringRepr,
} from '../../../src/wire/python-repr.js';

// Expected values were produced by CPython 3.11 (`str(x)`, `repr(x)`, `json.dumps(x)`).
describe('pythonStr', () => {
  it.each([
    [10, '10'],
    [23.5, '23.5'],
    [-3.14, '-3.14'],
    [1e20, '1e+20'],
    [1e16, '1e+16'],
    [9999999999999998, '9999999999999998'],
    [1e-5, '1e-05'],
    [0.0001, '0.0001'],
    [0.1 + 0.2, '0.30000000000000004'],
    [1.0, '1'], // JS cannot tell 1.0 from 1: integral numbers render as Python ints
    [-0, '0'],
    [true, 'True'],
    [false, 'False'],
    [null, 'None'],
    [undefined, 'None'],
    [[1, 'a'], "[1, 'a']"],
    [{ k: 'v' }, "{'k': 'v'}"],
    [[], '[]'],
    [{}, '{}'],
    ["it's", "it's"],
    ['say "hi"', 'say "hi"'],
    [{ nested: { a: [1, 2.5, null, true] }, x: [] }, "{'nested': {'a': [1, 2.5, None, True]}, 'x': []}"],
  ])('str(%j) is %s', (value, expected) => {
    expect(pythonStr(value)).toBe(expected);
  });

  it('renders strings inside containers with Python repr quoting and escapes', () => {
    const value = ["it's", 'say "hi"', 'both \' "', 'back\\slash', 'tab\tnl\n', '\x00\x7f', 'é', '\xa0', '\u2028', '😀', '\ud800'];
    expect(pythonStr(value)).toBe(
      String.raw`["it's", 'say "hi"', 'both \' "', 'back\\slash', 'tab\tnl\n', '\x00\x7f', ` +
        "'é', " +
        String.raw`'\xa0', '\u2028', ` +
        "'😀', " +
        String.raw`'\ud800']`,
    );
  });

  it('non-finite floats', () => {
    expect(pythonStr(NaN)).toBe('nan');
    expect(pythonStr(Infinity)).toBe('inf');
    expect(pythonStr(-Infinity)).toBe('-inf');
  });
});

describe('pythonFloatRepr / pythonNumberRepr', () => {
  it.each([
    [1e16, '1e+16'],
    [1e-5, '1e-05'],
    [0.0001, '0.0001'],
    [123456789012345.6, '123456789012345.6'],
    [1e22, '1e+22'],
    [5e-324, '5e-324'],
    [-2.5e-7, '-2.5e-07'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [1, '1.0'],
    [1e15, '1000000000000000.0'],
    [0, '0.0'],
    [-0, '-0.0'],
  ])('repr(float(%s)) is %s', (value, expected) => {
    expect(pythonFloatRepr(value)).toBe(expected);
  });

  it('integral numbers below 1e16 are ints, others floats', () => {
    expect(pythonNumberRepr(42)).toBe('42');
    expect(pythonNumberRepr(-7)).toBe('-7');
    expect(pythonNumberRepr(9007199254740991)).toBe('9007199254740991');
    expect(pythonNumberRepr(2e16)).toBe('2e+16');
    expect(pythonNumberRepr(0.5)).toBe('0.5');
  });
});

describe('pythonStringRepr / pythonRepr', () => {
  it('picks the quote like Python', () => {
    expect(pythonStringRepr('plain')).toBe("'plain'");
    expect(pythonStringRepr("it's")).toBe(`"it's"`);
    expect(pythonStringRepr('both \' "')).toBe(String.raw`'both \' "'`);
    expect(pythonRepr('x')).toBe("'x'");
  });

  it('escapes astral non-printables with \\U', () => {
    expect(pythonStringRepr('\u{E0001}')).toBe(String.raw`'\U000e0001'`); // language tag (Cf)
  });
});

describe('pythonJsonDumps', () => {
  it('matches json.dumps separators, escaping and number spelling', () => {
    const value = {
      s: 'é😀\x7f\x00\x1f"\\/\b\f\n\r\t',
      n: [1, 2.5, 1e16, 1e-5],
      b: [true, false, null],
      o: {},
      l: [],
    };
    expect(pythonJsonDumps(value)).toBe(
      String.raw`{"s": "\u00e9\ud83d\ude00\u007f\u0000\u001f\"\\/\b\f\n\r\t", "n": [1, 2.5, 1e+16, 1e-05], "b": [true, false, null], "o": {}, "l": []}`,
    );
  });

  it('writes non-finite numbers as Python does', () => {
    expect(pythonJsonDumps([NaN, Infinity, -Infinity])).toBe('[NaN, Infinity, -Infinity]');
  });

  it('skips undefined members like JSON.stringify, and maps them to null in arrays', () => {
    expect(pythonJsonDumps({ a: undefined, b: 1 })).toBe('{"b": 1}');
    expect(pythonJsonDumps([undefined])).toBe('[null]');
    expect(pythonJsonDumps(undefined)).toBe('null');
  });

  it('keeps key order and is parseable back to the same value', () => {
    const value = { z: 1, a: [{ y: 'é', x: null }], m: 'q' };
    const text = pythonJsonDumps(value);
    expect(Object.keys(JSON.parse(text) as object)).toEqual(['z', 'a', 'm']);
    expect(JSON.parse(text)).toEqual(value);
  });

  it('throws on circular structures', () => {
    const a: unknown[] = [];
    a.push(a);
    expect(() => pythonJsonDumps(a)).toThrow(InvalidUseError);
    const o: Record<string, unknown> = {};
    o.self = { o };
    expect(() => pythonJsonDumps(o)).toThrow(InvalidUseError);
  });

  it('spells every number as Python does, at any depth', () => {
    const numbers = [0, -0, 1e15, 1e16, 12345678901234567, 1e21, 1e100, 1e-4, 1.2e-4, 9e-5, 1e-7, -1e-7, 5e-324, 123.456, -0.5];
    expect(pythonJsonDumps(numbers)).toBe(
      '[0, 0, 1000000000000000, 1e+16, 1.2345678901234568e+16, 1e+21, 1e+100, 0.0001, 0.00012, 9e-05, 1e-07, -1e-07, 5e-324, 123.456, -0.5]',
    );
    expect(pythonJsonDumps({ a: { b: [1e-5] } })).toBe('{"a": {"b": [1e-05]}}');
    expect(pythonJsonDumps(1e-5)).toBe('1e-05');
  });

  it('leaves separators, digits and escapes inside strings alone', () => {
    const value = { 'k,: 1e5': 'a\\"b, c: 1e-7 \\', '"': ['\\', '\\\\"', ''] };
    expect(pythonJsonDumps(value)).toBe(String.raw`{"k,: 1e5": "a\\\"b, c: 1e-7 \\", "\"": ["\\", "\\\\\"", ""]}`);
  });

  it('writes what only the walker knows: NaN, bigints and toJSON, also nested', () => {
    expect(pythonJsonDumps({ a: [1, { b: NaN }], c: 2n, d: new Date(0), e: 'é' })).toBe(
      '{"a": [1, {"b": NaN}], "c": 2, "d": "1970-01-01T00:00:00.000Z", "e": "\\u00e9"}',
    );
  });

  it('gives the same bytes as pythonJsonBytes', () => {
    const value = { s: 'é😀\u2028', n: [1e-5, 2], nan: NaN };
    expect(pythonJsonBytes(value).toString('utf8')).toBe(pythonJsonDumps(value));
    expect(pythonJsonBytes({ s: 'é' }).toString('utf8')).toBe('{"s": "\\u00e9"}');
    expect(pythonJsonBytes(undefined).toString('utf8')).toBe('null');
  });

  it('reuses the JSON of an array given to dumpJsonOnce, inside other values', () => {
    const shared = dumpJsonOnce([{ x: 'é' }, 1e-5]);
    expect(pythonJsonDumps({ a: shared })).toBe('{"a": [{"x": "\\u00e9"}, 1e-05]}');
    expect(pythonJsonDumps({ b: shared, c: [shared] })).toBe('{"b": [{"x": "\\u00e9"}, 1e-05], "c": [[{"x": "\\u00e9"}, 1e-05]]}');
  });
});
