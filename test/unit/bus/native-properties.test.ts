import { describe, expect, it } from 'vitest';
import { plainProperties } from '../../../src/bus/pulsar/native/incoming.js';

describe('plainProperties (the native binding hands properties over as an array-like object)', () => {
  it('turns the array-like object into a plain string map', () => {
    const arrayLike = Object.assign([] as unknown[], { id: 'req-1', note: 'a: b / c' });
    arrayLike.length = 1;
    const properties = plainProperties(arrayLike as unknown as Record<string, unknown>);
    expect(properties).toEqual({ id: 'req-1', note: 'a: b / c' });
    expect(Array.isArray(properties)).toBe(false);
    expect(Object.getPrototypeOf(properties)).toBe(Object.prototype);
  });

  it('keeps a key named __proto__ as data instead of changing the prototype', () => {
    const raw = JSON.parse('{"__proto__": "x", "id": "1"}') as Record<string, unknown>;
    const properties = plainProperties(raw);
    expect(Object.keys(properties)).toEqual(['__proto__', 'id']);
    expect(Object.getPrototypeOf(properties)).toBe(Object.prototype);
  });
});
