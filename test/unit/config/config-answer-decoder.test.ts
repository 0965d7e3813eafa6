import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { isMainThread } from 'node:worker_threads';
import { decodeConfigAnswer, FIELDS_PER_ENTRY } from '../../../src/config/config-answer.js';
import { ConfigAnswerDecoder } from '../../../src/config/config-answer-decoder.js';
import { configResponseCodec } from '../../../src/wire/index.js';
import { WireDecodeError } from '../../../src/wire/errors.js';
import { capturingLogger } from '../../support/log-capture.js';

const decoders: ConfigAnswerDecoder[] = [];
function decoder(options: ConstructorParameters<typeof ConfigAnswerDecoder>[1] = {}) {
  const log = capturingLogger();
  const d = new ConfigAnswerDecoder(log.logger, options);
  decoders.push(d);
  return { decoder: d, log };
}
afterEach(async () => {
  await Promise.all(decoders.splice(0).map((d) => d.close()));
});

function outcome(run: () => unknown): Promise<unknown> {
  return Promise.resolve()
    .then(run)
    .then(
      (value) => ({ value }),
      (error: Error) => ({ error: error.name, message: error.message, isWireError: error instanceof WireDecodeError }),
    );
}

const tools = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`tool-${String(i).padStart(5, '0')}`, JSON.stringify({ name: `t${i}`, type: 'knowledge-query' })]));
const large = Buffer.from(
  JSON.stringify({ version: 9, values: Object.entries(tools).map(([key, value]) => ({ type: 'tool', key, value, workspace: 'w' })), error: null }),
);

const payloads: Record<string, Buffer> = {
  'a getvalues answer of 2 000 tools': large,
  'nulls and missing fields in entries': Buffer.from('{"version": 1, "values": [{"type": null, "key": "a", "value": null}, {"key": "b"}, {}]}'),
  'an error answer': Buffer.from('{"version": 0, "error": {"type": "bad-operation", "message": "no"}}'),
  'an entry of an unusual shape (the schema path)': Buffer.from('{"values": [{"type": "t", "key": "a", "value": 5, "workspace": ""}]}'),
  'not JSON': Buffer.from('{"values": ['),
  'a JSON array': Buffer.from('[1, 2]'),
  'invalid UTF-8': Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
};

describe('config answers decoded off the event loop', () => {
  it('the columns hold every entry of the answer, in order', () => {
    const answer = decodeConfigAnswer(large);
    expect(answer.version).toBe(9);
    expect(answer.entries.length).toBe(2000 * FIELDS_PER_ENTRY);
    expect(answer.entries.slice(0, 8)).toEqual(['tool', 'tool-00000', tools['tool-00000'], 'w', 'tool', 'tool-00001', tools['tool-00001'], 'w']);
    expect(configResponseCodec.decode(large).values?.[1999]?.key).toBe(answer.entries[1999 * FIELDS_PER_ENTRY + 1]);
  });

  describe('every answer through the worker', () => {
    // One worker for these cases: starting one from TypeScript sources takes seconds on a busy machine.
    const log = capturingLogger();
    const offThread = new ConfigAnswerDecoder(log.logger, { offThreadBytes: 0 });
    beforeAll(() => offThread.warmUp());
    afterAll(() => offThread.close());

    for (const [name, payload] of Object.entries(payloads)) {
    it(`gives what decoding on the event loop gives, error for error: ${name}`, async () => {
      const expected = await outcome(() => decodeConfigAnswer(payload));
      expect(await outcome(() => offThread.decode(payload))).toEqual(expected);
      expect(log.lines.filter((line) => line.level === 40)).toEqual([]);
    });
    }
  });

  it('decodes large answers in a worker thread once it is ready, small ones and those before on the event loop', async () => {
    const probe = new URL('./fixtures/main-thread-probe-worker.ts', import.meta.url);
    const { decoder: d } = decoder({ offThreadBytes: 1000, workerEntry: probe });
    const small = Buffer.from('{"version": 3, "values": []}');
    const decodedBy = async (payload: Buffer) => ((await d.decode(payload)).entries[0] === 'worker' ? 'worker' : 'event loop');
    // Not started yet: decoded here (the real answer), and the worker starts.
    expect(await decodedBy(large)).toBe('event loop');
    await d.warmUp();
    expect([await decodedBy(large), await decodedBy(small)]).toEqual(['worker', 'event loop']);
    expect(isMainThread).toBe(true);
  });

  it('decodes on the event loop, with the same result and error, when the worker fails mid-call; says so in the log', async () => {
    const exiting = new URL('../threads/fixtures/exit-on-call-worker.mjs', import.meta.url);
    const { decoder: failing, log } = decoder({ offThreadBytes: 0, workerEntry: exiting });
    await failing.warmUp();
    expect(await outcome(() => failing.decode(large))).toEqual(await outcome(() => decodeConfigAnswer(large)));
    // The worker is gone and the next one not ready yet: decoded here, without another warning.
    const notJson = payloads['not JSON']!;
    const error = await outcome(() => failing.decode(notJson));
    expect(error).toEqual(await outcome(() => decodeConfigAnswer(notJson)));
    expect(error).toMatchObject({ isWireError: true, message: expect.stringContaining('Cannot decode ConfigResponse') });
    const warnings = log.lines.filter((line) => line.level === 40).map((line) => line.msg);
    expect(warnings).toEqual(['Decoding a config answer in a worker failed; decoding it on the event loop instead']);
  });

  it('decodes on the event loop when the worker cannot start, and says so in the log', async () => {
    const missing = new URL('./fixtures/no-such-worker.mjs', import.meta.url);
    const { decoder: d, log } = decoder({ offThreadBytes: 1000, workerEntry: missing });
    expect(await outcome(() => d.decode(large))).toEqual(await outcome(() => decodeConfigAnswer(large)));
    const warning = 'The config decoding worker could not start; large config answers are decoded on the event loop';
    await vi.waitFor(() => expect(log.lines.map((line) => line.msg)).toContain(warning));
    expect(log.lines.filter((line) => line.level === 40).map((line) => line.msg)).toEqual([warning]);
  });
});
