/**
 * The worker thread of config-answer-decoder.ts: decodes one config answer per call, whole or (a `getvalues`
 * answer of a stream) as its change since the stream's previous answer, in chunks (values-delta.ts). An
 * answer that cannot be decoded is reported as such (the decoder raises the same error as on the event
 * loop); only a failure of the worker itself makes the call fail.
 */
import { serveCalls } from '../threads/index.js';
import { WireDecodeError } from '../wire/index.js';
import { decodeConfigAnswer, type ConfigAnswer } from './config-answer.js';
import type { DecodeCall, DecodeResult } from './config-answer-decoder.js';
import { ValuesDiffer } from './values-delta.js';

const differ = new ValuesDiffer();

serveCalls<DecodeCall, DecodeResult>((call) => {
  if ('chunkOf' in call) {
    const chunk = differ.chunk(call.chunkOf, call.from);
    return { result: chunk ? { chunk } : { chunkGone: true } };
  }
  let answer: ConfigAnswer;
  try {
    answer = decodeConfigAnswer(Buffer.from(call.payload.buffer, call.payload.byteOffset, call.payload.byteLength));
  } catch (error) {
    if (error instanceof WireDecodeError) return { result: { undecodable: { schema: error.schema, detail: error.detail } } };
    throw error;
  }
  if ('stream' in call) return { result: { delta: differ.delta(call.stream, call.base, answer) } };
  return { result: { answer } };
});
