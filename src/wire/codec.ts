/**
 * A codec turns one kind of TrustGraph message into bytes and back. Every message kind in src/wire has one,
 * built from its zod schema. Transports and the request client only ever see codecs, never schemas.
 */
export interface Codec<T> {
  /** The TrustGraph schema name, e.g. `AgentRequest`, used in error messages. */
  readonly name: string;
  /** Full snake_case JSON with every field present (`null` when absent), as UTF-8 bytes. */
  encode(value: T): Buffer;
  /**
   * Tolerant decode: nulls, missing fields and unknown keys are accepted.
   * @throws WireDecodeError naming the schema and what was wrong.
   */
  decode(payload: Buffer | string): T;
}

