import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodeConfigAnswer } from '../../../src/config/config-answer.js';
import { ConfigAnswerDecoder } from '../../../src/config/config-answer-decoder.js';
import { CHUNK_PAIRS, ValuesDiffer, valuesOf } from '../../../src/config/values-delta.js';
import { capturingLogger } from '../../support/log-capture.js';

type Entry = { type?: string | null; key?: string | null; value?: string | null; workspace?: string };

function answer(version: number, entries: Entry[], error: unknown = null): Buffer {
  return Buffer.from(JSON.stringify({ version, values: entries, error }));
}

function tools(count: number, revision: number, changed = count): Entry[] {
  return Array.from({ length: count }, (_, i) => ({
    type: 'tool',
    key: `tool-${String(i).padStart(5, '0')}`,
    value: JSON.stringify({ name: `t${i}`, type: 'knowledge-query', revision: i < changed ? revision : 1 }),
    workspace: 'w',
  }));
}

/** What decoding the whole answer on the event loop gives, as a plain object. */
function expected(payload: Buffer): Record<string, string> {
  return Object.fromEntries(valuesOf(decodeConfigAnswer(payload)));
}

/** Every key → value the differ's deltas give, applied one after another, with every chunk taken. */
function applyDelta(differ: ValuesDiffer, held: { token?: number; values: Map<string, string> }, payload: Buffer) {
  const delta = differ.delta('w\u0000tool', held.token, decodeConfigAnswer(payload));
  const values = delta.base === undefined ? new Map<string, string>() : new Map(held.values);
  for (const key of delta.removed) values.delete(key);
  let changed = delta.changed;
  let from = 0;
  let chunks = 1;
  for (;;) {
    for (let i = 0; i < changed.length; i += 2) values.set(changed[i]!, changed[i + 1]!);
    from += changed.length;
    if (from >= delta.changedLength) break;
    changed = differ.chunk(delta.token, from)!;
    chunks++;
  }
  return { delta, chunks, held: { token: delta.token, values } };
}

describe('a getvalues answer as the change since the previous one (ValuesDiffer)', () => {
  it('moves only the changed, added and removed entries, and ends with the map of the whole answer', () => {
    const differ = new ValuesDiffer();
    let held: { token?: number; values: Map<string, string> } = { values: new Map() };
    const first = answer(1, tools(2500, 1));
    let step = applyDelta(differ, held, first);
    expect(step.delta.base).toBeUndefined();
    expect(step.delta.changedLength).toBe(2 * 2500);
    expect(step.chunks).toBe(Math.ceil(2500 / CHUNK_PAIRS));
    expect(Object.fromEntries(step.held.values)).toEqual(expected(first));
    held = step.held;

    const oneChanged = answer(2, tools(2500, 2, 1));
    step = applyDelta(differ, held, oneChanged);
    expect(step.delta.base).toBe(held.token);
    expect([step.delta.changed, step.delta.removed]).toEqual([['tool-00000', JSON.stringify({ name: 't0', type: 'knowledge-query', revision: 2 })], []]);
    expect(Object.fromEntries(step.held.values)).toEqual(expected(oneChanged));
    held = step.held;

    // One removed, one added, one changed; an entry without a key and one with a null value.
    const entries = tools(2500, 2, 1).filter((e) => e.key !== 'tool-01000');
    entries[5] = { ...entries[5]!, value: 'changed' };
    entries.push({ type: 'tool', key: 'tool-99999', value: 'new', workspace: 'w' }, { type: 'tool', value: 'keyless' }, { type: 'tool', key: 'tool-00007', value: null });
    const mixed = answer(3, entries);
    step = applyDelta(differ, held, mixed);
    expect([...step.delta.removed]).toEqual(['tool-01000']);
    // A missing key reads as "" (the schema's default), as on the event loop.
    expect([...step.delta.changed]).toEqual(['tool-00005', 'changed', 'tool-00007', '', 'tool-99999', 'new', '', 'keyless']);
    expect(Object.fromEntries(step.held.values)).toEqual(expected(mixed));
  });

  it('answers with every entry when it no longer holds the base, and keeps its map over an error answer', () => {
    const differ = new ValuesDiffer();
    const first = decodeConfigAnswer(answer(1, tools(10, 1)));
    const a = differ.delta('s', undefined, first);
    const refused = differ.delta('s', a.token, decodeConfigAnswer(answer(2, [], { type: 'bad', message: 'no' })));
    expect([refused.error, refused.changedLength, refused.removed]).toEqual([{ type: 'bad', message: 'no' }, 0, []]);
    // The error answer did not replace the base.
    const same = differ.delta('s', a.token, first);
    expect([same.base, same.changedLength]).toEqual([a.token, 0]);
    // A base this differ never gave (or gave another stream): every entry.
    expect(differ.delta('s', 12345, first)).toMatchObject({ base: undefined, changedLength: 20 });
    expect(differ.delta('other', same.token, first)).toMatchObject({ base: undefined, changedLength: 20 });
  });

  it('says when the rest of a delta is no longer held', () => {
    const differ = new ValuesDiffer();
    const big = decodeConfigAnswer(answer(1, tools(CHUNK_PAIRS + 1, 1)));
    const first = differ.delta('s', undefined, big);
    expect(differ.chunk(first.token, first.changed.length)).toHaveLength(2);
    // Its last chunk was taken: gone.
    expect(differ.chunk(first.token, first.changed.length)).toBeUndefined();
    const second = differ.delta('s', undefined, big);
    for (let i = 0; i < 4; i++) differ.delta(`t${i}`, undefined, big);
    expect(differ.chunk(second.token, second.changed.length)).toBeUndefined();
  });
});

describe('ConfigAnswerDecoder.values', () => {
  const decoders: ConfigAnswerDecoder[] = [];
  afterEach(async () => {
    await Promise.all(decoders.splice(0).map((d) => d.close()));
  });

  describe('through the worker', () => {
    const log = capturingLogger();
    // Small answers on the event loop, large ones in the worker: the sequence below mixes both.
    const decoder = new ConfigAnswerDecoder(log.logger, { offThreadBytes: 20_000 });
    beforeAll(() => decoder.warmUp());
    afterAll(() => decoder.close());

    it('gives, answer after answer, the map decoding the whole answer on the event loop gives', async () => {
      const sequence = [
        answer(1, tools(2500, 1)),
        answer(2, tools(2500, 2, 1)),
        answer(3, tools(2500, 3)),
        answer(4, tools(10, 4)),
        answer(5, tools(2400, 5, 3)),
        answer(6, tools(2400, 6, 3).reverse()),
        answer(7, [...tools(2400, 6, 3), { key: '__proto__', value: 'an entry like any other' }]),
        answer(8, []),
        answer(9, tools(1200, 9)),
      ];
      for (const payload of sequence) {
        const got = await decoder.values(payload, 'w\u0000tool');
        expect({ ...got.values }).toEqual(expected(payload));
        expect(Object.getPrototypeOf(got.values)).toBeNull();
        expect(Object.isFrozen(got.values)).toBe(true);
        expect(got.version).toBe(decodeConfigAnswer(payload).version);
      }
      expect(log.lines.filter((line) => Number(line.level) >= 40)).toEqual([]);
    });

    it('raises the same errors as decoding on the event loop', async () => {
      for (const payload of [Buffer.from(`{"values": [${'1,'.repeat(20_000)}`), Buffer.from(`[${'1,'.repeat(20_000)}1]`)]) {
        const here = await Promise.resolve().then(() => decodeConfigAnswer(payload)).catch((error: Error) => error);
        const there = await decoder.values(payload, 'w\u0000tool').catch((error: Error) => error);
        expect(there).toBeInstanceOf(Error);
        expect([(there as Error).name, (there as Error).message]).toEqual([(here as Error).name, (here as Error).message]);
      }
      const refused = await decoder.values(answer(3, [], { type: 'bad-operation', message: 'no' }), 'w\u0000tool');
      expect([refused.error, { ...refused.values }]).toEqual([{ type: 'bad-operation', message: 'no' }, {}]);
    });
  });

  it('decodes on the event loop, with the same map, when the worker fails mid-call; says so in the log', async () => {
    const log = capturingLogger();
    const exiting = new URL('../threads/fixtures/exit-on-call-worker.mjs', import.meta.url);
    const failing = new ConfigAnswerDecoder(log.logger, { offThreadBytes: 0, workerEntry: exiting });
    decoders.push(failing);
    await failing.warmUp();
    const payload = answer(1, tools(1500, 1));
    expect({ ...(await failing.values(payload, 's')).values }).toEqual(expected(payload));
    expect(log.lines.filter((line) => line.level === 40).map((line) => line.msg)).toEqual([
      'Decoding a config answer in a worker failed; decoding it on the event loop instead',
    ]);
  });
});
