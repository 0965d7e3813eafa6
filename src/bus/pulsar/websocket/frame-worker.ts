/** The worker thread of frame-decoder.ts: bytes of one text frame in, the decoded frame out (its payload moved, not copied). */
import { serveCalls } from '../../../threads/index.js';
import { decodeFrame, type DecodedFrame } from './frame.js';

serveCalls<Uint8Array, DecodedFrame>((bytes) => {
  const decoded = decodeFrame(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  const payload = 'message' in decoded ? decoded.message.payload : undefined;
  // A payload that owns its memory moves to the event loop as is; a slice of Node's buffer pool is copied.
  const owned = payload !== undefined && payload.byteOffset === 0 && payload.byteLength === payload.buffer.byteLength;
  return { result: decoded, ...(owned ? { transfer: [payload.buffer as ArrayBuffer] } : {}) };
});
