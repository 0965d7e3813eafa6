/**
 * A config service answer as the config client uses it: its version, its error, and its value entries as
 * columns (one flat list of strings, four per entry) instead of one object per entry. A `getvalues` answer of
 * 10 000 tools is decoded in a worker thread (config-answer-decoder.ts); 40 000 strings in one list cost a
 * fraction of 10 000 objects to copy back to the event loop.
 */
import { type ConfigResponse, configResponseCodec } from '../wire/index.js';

/** Per entry, in this order: type, key, value, workspace (`null` where the answer had `null`). */
export const FIELDS_PER_ENTRY = 4;

export interface ConfigAnswer {
  readonly version: number;
  readonly error: ConfigResponse['error'];
  readonly entries: readonly (string | null)[];
}

/** Decode a ConfigResponse payload into an answer. @throws WireDecodeError as `configResponseCodec.decode` */
export function decodeConfigAnswer(payload: Buffer): ConfigAnswer {
  const response = configResponseCodec.decode(payload);
  const values = response.values ?? [];
  const entries = new Array<string | null>(values.length * FIELDS_PER_ENTRY);
  for (let i = 0, j = 0; i < values.length; i++, j += FIELDS_PER_ENTRY) {
    const value = values[i]!;
    entries[j] = value.type;
    entries[j + 1] = value.key;
    entries[j + 2] = value.value;
    entries[j + 3] = value.workspace;
  }
  return { version: response.version ?? 0, error: response.error, entries };
}
