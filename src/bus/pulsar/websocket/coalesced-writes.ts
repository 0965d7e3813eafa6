/**
 * Frames written to one WebSocket in one turn of the event loop leave in one system call: the first frame
 * corks the socket, and it is uncorked once the turn's callbacks have run (setImmediate), so that every frame
 * written meanwhile (an iteration's responses, the acks of the messages a read delivered, the frames of other
 * conversations on the same producer) goes out in one `writev`. A write per frame cost the agent a system call,
 * and on loopback the broker's TCP receive work with it, for each of its dozen frames per iteration. The bytes
 * on the wire are the same; a frame waits at most for the rest of the turn it was written in.
 */
import type { Socket } from 'node:net';
import type WebSocket from 'ws';

const corked = new WeakSet<Socket>();

/** `ws.send(data, callback)`, coalesced with the socket's other writes of this turn. */
export function sendCoalesced(ws: WebSocket, data: string, callback: (err?: Error) => void): void {
  // ws keeps its TCP socket in `_socket` (unchanged since ws 1); without it the frame is simply sent alone.
  const socket = (ws as unknown as { _socket?: Socket })._socket;
  if (socket && !socket.destroyed && !corked.has(socket)) {
    socket.cork();
    corked.add(socket);
    setImmediate(() => {
      corked.delete(socket);
      socket.uncork();
    });
  }
  ws.send(data, callback);
}
