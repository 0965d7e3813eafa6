/**
 * The worker thread of config-answer-decoder.ts: decodes one config answer per call. An answer that cannot
 * be decoded is reported as such (the decoder raises the same error as on the event loop); only a failure
 * of the worker itself makes the call fail.
 */
import { serveCalls } from '../threads/serve-calls.js';
import { WireDecodeError } from '../wire/errors.js';
import { decodeConfigAnswer } from './config-answer.js';
import type { DecodeCall, DecodeResult } from './config-answer-decoder.js';

serveCalls<DecodeCall, DecodeResult>(({ payload }) => {
  try {
    return { result: { answer: decodeConfigAnswer(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength)) } };
  } catch (error) {
    if (error instanceof WireDecodeError) return { result: { undecodable: { schema: error.schema, detail: error.detail } } };
    throw error;
  }
});
