import { beforeAll, describe, expect, it, vi } from 'vitest';
import { decodeFrame, type DecodedFrame } from '../../../src/bus/pulsar/websocket/frame.js';
import { FrameDecoder } from '../../../src/bus/pulsar/websocket/frame-decoder.js';
import { capturingLogger } from '../../support/log-capture.js';

const frame = (messageId: string, payload: Buffer | string, extra: Record<string, unknown> = {}): Buffer =>
  Buffer.from(JSON.stringify({ messageId, payload: Buffer.from(payload).toString('base64'), publishTime: '', ...extra }));

const big = Buffer.alloc(300 * 1024, 'x');

/** A decoded frame with its payload as base64: comparing 300 KiB Buffers with toEqual takes seconds. */
function comparable(f: DecodedFrame): unknown {
  if (!('message' in f)) return f;
  const { payload, ...rest } = f.message;
  return { ...rest, isBuffer: Buffer.isBuffer(payload), base64: payload.toString('base64') };
}

/** A decoder (made ready first), the frames pushed at once, and what it handed over, in order, once it has all. */
async function decodeAll(make: (onDecoded: (frame: DecodedFrame) => void) => FrameDecoder, frames: Buffer[]): Promise<DecodedFrame[]> {
  const out: DecodedFrame[] = [];
  let done: () => void = () => {};
  const all = new Promise<void>((resolve) => (done = resolve));
  const decoder = make((f) => {
    out.push(f);
    if (out.length === frames.length) done();
  });
  await decoder.warmUp();
  for (const f of frames) decoder.push(f);
  await all;
  return out;
}

const expected = (frames: Buffer[]): unknown[] => frames.map((f) => comparable(decodeFrame(f.toString('utf8'))));

describe('WebSocket frames decoded off the event loop when large', () => {
  // Every decoder shares one worker; starting it from TypeScript sources takes seconds on a busy machine.
  beforeAll(() => new FrameDecoder(capturingLogger().logger, () => {}).warmUp());

  it('hands frames over in arrival order, large ones decoded in the worker, with the same result', async () => {
    const log = capturingLogger();
    const frames = [frame('1', 'small'), frame('2', big, { properties: { a: 'b' }, redeliveryCount: 2 }), frame('3', 'after'), Buffer.from('not json'), frame('4', big)];
    const decoded = await decodeAll((onDecoded) => new FrameDecoder(log.logger, onDecoded), frames);
    expect(decoded.map(comparable)).toEqual(expected(frames));
    expect(decoded.map((f) => ('message' in f ? f.message.messageId : Object.keys(f)[0]))).toEqual(['1', '2', '3', 'unparseable', '4']);
    expect(log.lines.filter((line) => line.level === 40)).toEqual([]);
  });

  it('decodes large frames in the worker once it is ready, small ones and those before on the event loop', async () => {
    const probe = new URL('./fixtures/frame-probe-worker.ts', import.meta.url);
    const out: DecodedFrame[] = [];
    const decoder = new FrameDecoder(capturingLogger().logger, (f) => out.push(f), 1000, probe);
    const large = frame('1', big);
    // Not started yet: decoded here (the real frame), and the worker starts.
    decoder.push(large);
    expect(out.map(comparable)).toEqual(expected([large]));
    await decoder.warmUp();
    decoder.push(large);
    decoder.push(frame('2', 'small'));
    await vi.waitFor(() => expect(out).toHaveLength(3));
    expect(out.slice(1).map((f) => ('message' in f ? f.message.messageId : f))).toEqual([{ notMessage: 'worker' }, '2']);
  });

  it('decodes here, with the same result and in order, when the worker fails mid-call, and says so', async () => {
    const log = capturingLogger();
    const frames = [frame('1', big), Buffer.from('{"messageId": 5}'), Buffer.from('null'), frame('2', 'x')];
    // A threshold of 0 sends every frame to the ready worker, all four before it exits on the first.
    const exiting = new URL('../threads/fixtures/exit-on-call-worker.mjs', import.meta.url);
    const decoded = await decodeAll((onDecoded) => new FrameDecoder(log.logger, onDecoded, 0, exiting), frames);
    expect(decoded.map(comparable)).toEqual(expected(frames));
    expect(decoded[1]).toEqual({ notMessage: '{"messageId": 5}' });
    expect(log.lines.filter((line) => line.level === 40).map((line) => line.msg)).toEqual(
      frames.map(() => 'Decoding a WebSocket frame in a worker failed; decoding it on the event loop instead'),
    );
  });

  it('decodes here when the worker cannot start, and says so in the log', async () => {
    const log = capturingLogger();
    const out: DecodedFrame[] = [];
    const missing = new URL('./fixtures/no-such-worker.mjs', import.meta.url);
    const decoder = new FrameDecoder(log.logger, (f) => out.push(f), 1000, missing);
    const large = frame('1', big);
    decoder.push(large);
    expect(out.map(comparable)).toEqual(expected([large]));
    const warning = 'The WebSocket frame decoding worker could not start; large frames are decoded on the event loop';
    await vi.waitFor(() => expect(log.lines.map((line) => line.msg)).toContain(warning));
    expect(log.lines.filter((line) => line.level === 40).map((line) => line.msg)).toEqual([warning]);
  });
});
