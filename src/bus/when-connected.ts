/** Waiting for a transport to be whole again, by listening to its status instead of polling it. */
import { TransportError } from './errors.js';
import type { Transport } from './transport.js';

/**
 * Resolves as soon as the transport reports every producer and consumer connected; rejects with a retriable
 * TransportError after `timeoutMs`, naming `what` could not be done and why the transport was down.
 */
export function whenConnected(transport: Pick<Transport, 'status' | 'onStatus'>, timeoutMs: number, what: string): Promise<void> {
  if (transport.status().connected) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const stop = transport.onStatus((status) => {
      if (!status.connected) return;
      stop();
      clearTimeout(timer);
      resolve();
    });
    const timer = setTimeout(() => {
      stop();
      const detail = transport.status().detail ?? 'disconnected';
      reject(new TransportError(`${what}: the broker connection is not whole after ${timeoutMs} ms (${detail})`, { retriable: true }));
    }, timeoutMs);
  });
}
