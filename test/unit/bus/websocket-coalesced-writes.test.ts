/**
 * Frames written to one WebSocket in one turn of the event loop leave in one socket write, in order, each
 * write's callback called; frames of a later turn in a write of their own.
 */
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { sendCoalesced } from '../../../src/bus/pulsar/websocket/coalesced-writes.js';

let server: WebSocketServer | undefined;
let client: WebSocket | undefined;

afterEach(async () => {
  client?.terminate();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
  client = undefined;
});

/** A client connected to a local ws server that records every text frame it receives. */
async function connected(): Promise<{ ws: WebSocket; received: string[]; writes: () => number }> {
  const received: string[] = [];
  server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  server.on('connection', (peer) => peer.on('message', (data) => received.push(String(data))));
  await new Promise<void>((resolve) => server!.once('listening', () => resolve()));
  const ws = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  client = ws;
  await new Promise<void>((resolve, reject) => ws.once('open', () => resolve()).once('error', reject));
  // Count the writes the client's TCP socket hands to the operating system (one per write or writev).
  const socket = (ws as unknown as { _socket: Socket & { _write: (...a: unknown[]) => void; _writev: (...a: unknown[]) => void } })._socket;
  let writes = 0;
  const write = socket._write.bind(socket);
  const writev = socket._writev.bind(socket);
  socket._write = (...args: unknown[]) => {
    writes++;
    write(...args);
  };
  socket._writev = (...args: unknown[]) => {
    writes++;
    writev(...args);
  };
  return { ws, received, writes: () => writes };
}

const sent = (ws: WebSocket, text: string): Promise<void> =>
  new Promise((resolve, reject) => sendCoalesced(ws, text, (err) => (err ? reject(err) : resolve())));

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('sendCoalesced', () => {
  it('writes the frames of one turn in one socket write, in order', async () => {
    const { ws, received, writes } = await connected();
    await Promise.all([sent(ws, 'one'), sent(ws, 'two'), sent(ws, 'three')]);
    await until(() => received.length === 3);
    expect(received).toEqual(['one', 'two', 'three']);
    expect(writes()).toBe(1);
  });

  it('writes the frames of a later turn in a write of their own', async () => {
    const { ws, received, writes } = await connected();
    await Promise.all([sent(ws, 'a'), sent(ws, 'b')]);
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.all([sent(ws, 'c'), sent(ws, 'd')]);
    await until(() => received.length === 4);
    expect(received).toEqual(['a', 'b', 'c', 'd']);
    expect(writes()).toBe(2);
  });
});
