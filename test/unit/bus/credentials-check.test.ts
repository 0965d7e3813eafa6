import { describe, expect, it } from 'vitest';
import { commandType, connectFrame } from '../../../src/bus/pulsar/credentials-check.js';

describe('the CONNECT frame of the native credentials check', () => {
  it('is a well-framed BaseCommand of type CONNECT carrying the token method and data', () => {
    const frame = connectFrame('abc.def.ghi');
    expect(frame.readUInt32BE(0)).toBe(frame.length - 4);
    expect(frame.readUInt32BE(4)).toBe(frame.length - 8);
    expect(commandType(frame)).toBe(2);
    expect(frame.includes(Buffer.from('token'))).toBe(true);
    expect(frame.includes(Buffer.from('abc.def.ghi'))).toBe(true);
  });

  it('carries no auth fields without a token', () => {
    const frame = connectFrame(undefined);
    expect(frame.includes(Buffer.from('token'))).toBe(false);
    expect(commandType(frame)).toBe(2);
  });

  it('reads no type from a frame that is too short', () => {
    expect(commandType(Buffer.alloc(4))).toBeUndefined();
  });
});
