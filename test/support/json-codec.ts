/** A plain JSON codec for request-client tests that need no TrustGraph schema. */
import type { Codec } from '../../src/wire/codec.js';
import { WireDecodeError } from '../../src/wire/errors.js';

export function jsonCodec<T>(name: string): Codec<T> {
  return {
    name,
    encode: (value) => Buffer.from(JSON.stringify(value), 'utf8'),
    decode: (payload) => {
      try {
        return JSON.parse(payload.toString()) as T;
      } catch (cause) {
        throw new WireDecodeError(name, 'not JSON', { cause });
      }
    },
  };
}
