/**
 * A transport's connection status as a value that changes, with listeners: what `Transport.status()` returns
 * and `Transport.onStatus()` pushes. Each transport owns one and tells it what its links did.
 *
 * `epoch` counts the established connections lost so far. Whatever was awaited on a non-persistent topic
 * across a change of epoch may be gone (the broker stores nothing for a subscription that is away), so a
 * waiting caller compares the epoch it started in with the current one.
 */
import type { StatusListener, TransportStatus } from './transport.js';

export class ConnectionStatus {
  private current: TransportStatus = { connected: true, epoch: 0 };
  private readonly listeners = new Set<StatusListener>();

  get(): TransportStatus {
    return this.current;
  }

  /** Listen to every change of `connected` or `epoch`; returns the function that stops listening. */
  on(listener: StatusListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The transport's links are all up (`detail` undefined) or not (`detail` says why). */
  set(connected: boolean, detail?: string): void {
    this.change({ connected, epoch: this.current.epoch, ...(detail === undefined ? {} : { detail }) });
  }

  /** An established connection was lost: a new epoch begins, and the transport is not connected. */
  lost(detail: string): void {
    this.change({ connected: false, detail, epoch: this.current.epoch + 1 });
  }

  private change(next: TransportStatus): void {
    const previous = this.current;
    this.current = next;
    if (previous.connected === next.connected && previous.epoch === next.epoch) return;
    for (const listener of [...this.listeners]) {
      try {
        listener(next);
      } catch {
        // A listener's failure is its own; the others still hear the change.
      }
    }
  }
}
