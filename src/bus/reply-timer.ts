/**
 * The timer of one wait for a reply to a request. Should it run out after the broker connection was lost since
 * the request went out, the reply may have gone with the connection, which says nothing of the service: the
 * request is given up as lost instead (at once if the connection is whole again; else RequestClient does so
 * when it is, as for every request waiting across a loss), and the wait ends as a timeout only if the
 * connection is not back one more period later.
 */
import type { TransportStatus } from './transport.js';

export interface ReplyTimer {
  cancel(): void;
}

/**
 * Calls `timedOut` after `waitMs`, or `lost` when the transport's epoch has moved past `epoch` (the one the
 * request was sent in) by then and the connection is whole; with the connection still down, it waits once more.
 */
export function replyTimer(status: () => TransportStatus, epoch: number, waitMs: number, lost: () => void, timedOut: () => void): ReplyTimer {
  let extended = false;
  const expire = (): void => {
    const now = status();
    if (extended || now.epoch <= epoch) return timedOut();
    extended = true;
    if (now.connected) return lost();
    timer = setTimeout(expire, waitMs);
  };
  let timer = setTimeout(expire, waitMs);
  return { cancel: () => clearTimeout(timer) };
}
