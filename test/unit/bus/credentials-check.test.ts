import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { checkNativeCredentials, commandType, connectFrame } from '../../../src/bus/pulsar/credentials-check.js';

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

describe('checkNativeCredentials', () => {
  it('asks the first broker of a cluster\'s service URL (pulsar://a:p,b:q), which no URL parser takes', async () => {
    // A broker that answers any CONNECT with CONNECTED (BaseCommand type 3).
    const connected = Buffer.from([0, 0, 0, 6, 0, 0, 0, 2, 0x08, 0x03]);
    const server = createServer((socket) => socket.once('data', () => socket.write(connected)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const verdict = await checkNativeCredentials({ serviceUrl: `pulsar://127.0.0.1:${port},127.0.0.1:1`, token: 'abc', timeoutMs: 5000 });
      expect(verdict).toEqual({ accepted: true });
    } finally {
      server.close();
    }
  });
});
