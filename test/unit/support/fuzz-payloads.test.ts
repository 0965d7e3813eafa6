/**
 * The fuzz tests' message mutator (test/support/fuzz-payloads.ts): fast-check hands out the same instance of a
 * constant value each time it is drawn, so a mutator that set the drawn value itself could put an object inside an
 * array inside that same object, and the payload could not be written (a CI run's resilience-fuzz failed so:
 * "Converting circular structure to JSON").
 */
import { describe, expect, it } from 'vitest';
import { mutate, type Mutation } from '../../support/fuzz-payloads.js';

describe('fuzz payload mutations', () => {
  it('sets copies of the drawn values, so one drawn twice makes no circle and stays as it was', () => {
    const object = { a: 'b' };
    const array = ['a'];
    // { p: 1 } → p = object → object.a = array → array[0] = object: a circle if the instances themselves were set.
    const mutations: Mutation[] = [
      { op: 'set', at: 0, key: '', value: object },
      { op: 'set', at: 1, key: '', value: array },
      { op: 'set', at: 2, key: '', value: object },
    ];
    const message = mutate({ p: 1 }, mutations);
    expect(JSON.parse(JSON.stringify(message))).toEqual({ p: { a: [{ a: 'b' }] } });
    expect(object).toEqual({ a: 'b' });
    expect(array).toEqual(['a']);
  });
});
