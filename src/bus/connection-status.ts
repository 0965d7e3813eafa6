/**
 * A transport's connection status as a value that changes, with listeners: what `Transport.status()` returns
 * and `Transport.onStatus()` pushes. Each transport owns one and tells it what its links did.
 *
 * `epoch` counts the established connections lost so far. Whatever was awaited on a non-persistent topic
 * across a change of epoch may be gone (the broker stores nothing for a subscription that is away), so a
 * waiting caller compares the epoch it started in with the current one.
 *
 * After a lost connection is whole again, a publish waits out the rest of RECONNECT_SETTLE_MS (`settled()`): the
 * services and the gateway that subscribe to what we publish reconnect on their own schedules, and a message on
 * a non-persistent topic published before their subscription is back is dropped by the broker. Our own clients
 * retry at least every 2 s; the settle covers that and a margin.
 */
import type { StatusListener, TransportStatus } from './transport.js';
import { whenConnected } from './when-connected.js';

/** How long after a reconnect publishes wait for other clients' subscriptions to come back. */
export const RECONNECT_SETTLE_MS = 3000;

export class ConnectionStatus {
  private current: TransportStatus = { connected: true, epoch: 0 };
  private readonly listeners = new Set<StatusListener>();
  /** performance.now() when a lost connection was last whole again; -Infinity: never lost. */
  private restoredAt = -Infinity;

  constructor(private readonly settleMs = RECONNECT_SETTLE_MS) {}

  /**
   * Resolves when a publish may go out: at once, unless a lost connection is not whole yet (then once it is,
   * waiting at most `maxWaitMs`) or was whole again less than the settle time ago (then once that has passed).
   * False: the lost connection is still not whole after `maxWaitMs`.
   */
  async settled(maxWaitMs: number): Promise<boolean> {
    if (!this.current.connected && this.current.epoch > 0) {
      const view = { status: () => this.current, onStatus: (listener: StatusListener) => this.on(listener) };
      const whole = await whenConnected(view, maxWaitMs, 'publish').then(() => true, () => false);
      if (!whole) return false;
    }
    const wait = this.restoredAt + this.settleMs - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    return true;
  }

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
    if (next.connected && !previous.connected && next.epoch > 0) this.restoredAt = performance.now();
    for (const listener of [...this.listeners]) {
      try {
        listener(next);
      } catch {
        // A listener's failure is its own; the others still hear the change.
      }
    }
  }
}
