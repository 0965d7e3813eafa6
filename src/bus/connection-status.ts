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
 * retry at least every 2 s; the settle covers that and a margin. Where the broker's admin API is known, a
 * publish to a non-persistent topic in the minute after a reconnect also waits until the topic has a subscriber
 * again (pulsar/subscriber-presence.ts), once per topic and reconnect.
 *
 * A transport that can tell which of its links a publish needs (the native one: its own producer and, for a call,
 * its reply subscription) gates the publish on those links instead (`PublishLink`): one link that stays down,
 * a producer nobody has used since the start, then holds back only the publishes that need it.
 */
import type { StatusListener, TransportStatus } from './transport.js';
import { whenConnected } from './when-connected.js';

/**
 * Told to wait until `topic` has a subscriber, for at most `maxWaitMs`; never fails. Where the broker can say
 * who reads a topic (Pulsar's admin API: pulsar/subscriber-presence.ts).
 */
export interface SubscriberCheck {
  waitFor(topic: string, maxWaitMs: number): Promise<void>;
}

/** One link (a producer, a consumer) that a publish needs, as a transport that gates publishes per link sees it. */
export interface PublishLink {
  /** Names it in errors, e.g. `producer for persistent://tg/flow/x`. */
  readonly name: string;
  /** Whether it is connected now. */
  up(): boolean;
  /** performance.now() when it was last seen connected again after being down; -Infinity: never down. */
  restoredAt(): number;
}

/** How often a publish waiting for its links looks at them again (the native binding has no connection events). */
const LINK_POLL_MS = 100;

/** How long after a reconnect publishes wait for other clients' subscriptions to come back. */
export const RECONNECT_SETTLE_MS = 3000;
/** How long after a reconnect a publish to a non-persistent topic first checks that the topic has a subscriber. */
const PRESENCE_WINDOW_MS = 60_000;

export class ConnectionStatus {
  private current: TransportStatus = { connected: true, epoch: 0 };
  private readonly listeners = new Set<StatusListener>();
  /** performance.now() when a lost connection was last whole again; -Infinity: never lost. */
  private restoredAt = -Infinity;
  /** Per topic, the wait for a subscriber since a reconnect (`since`: its time), shared by the publishes that need it. */
  private readonly presence = new Map<string, { since: number; done: Promise<void> }>();

  constructor(
    private readonly settleMs = RECONNECT_SETTLE_MS,
    private readonly subscribers?: SubscriberCheck,
  ) {}

  /**
   * Resolves when a publish may go out: at once, unless a lost connection is not whole yet (then once it is,
   * waiting at most `maxWaitMs`) or was whole again less than the settle time ago (then once that has passed).
   * With `links`, it is those links that must be up and settled, whatever the others do. With `topic`, a
   * non-persistent one, it also waits (within `maxWaitMs`) until the topic has a subscriber.
   * False: what it waits for is still not up after `maxWaitMs`.
   */
  async settled(maxWaitMs: number, topic?: string, links?: readonly PublishLink[]): Promise<boolean> {
    const restoredAt = links ? await this.linksUp(links, maxWaitMs) : await this.transportWhole(maxWaitMs);
    if (restoredAt === undefined) return false;
    const wait = restoredAt + this.settleMs - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (topic?.startsWith('non-persistent://') && this.subscribers && performance.now() - restoredAt < PRESENCE_WINDOW_MS) {
      let waiting = this.presence.get(topic);
      if (waiting?.since !== restoredAt) {
        waiting = { since: restoredAt, done: this.subscribers.waitFor(topic, maxWaitMs) };
        this.presence.set(topic, waiting);
      }
      await waiting.done;
    }
    return true;
  }

  /** When the transport was last whole again once it is whole (within `maxWaitMs`); undefined if it is not. */
  private async transportWhole(maxWaitMs: number): Promise<number | undefined> {
    if (!this.current.connected && this.current.epoch > 0) {
      const view = { status: () => this.current, onStatus: (listener: StatusListener) => this.on(listener) };
      const whole = await whenConnected(view, maxWaitMs, 'publish').then(() => true, () => false);
      if (!whole) return undefined;
    }
    return this.restoredAt;
  }

  /** The latest return of `links` once all are up (within `maxWaitMs`); undefined if one is not. */
  private async linksUp(links: readonly PublishLink[], maxWaitMs: number): Promise<number | undefined> {
    const deadline = performance.now() + maxWaitMs;
    while (!links.every((link) => link.up())) {
      if (performance.now() >= deadline) return undefined;
      await new Promise((resolve) => setTimeout(resolve, Math.min(LINK_POLL_MS, Math.max(1, deadline - performance.now()))));
    }
    return Math.max(...links.map((link) => link.restoredAt()));
  }

  get(): TransportStatus {
    return this.current;
  }

  /** Listen to every change of `connected` or `epoch`; returns the function that stops listening. */
  on(listener: StatusListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The transport's links are all up (`detail` undefined) or not (`detail` says why; `receiving`: TransportStatus). */
  set(connected: boolean, detail?: string, receiving?: boolean): void {
    this.change({ connected, epoch: this.current.epoch, ...(detail === undefined ? {} : { detail }), ...(receiving === undefined ? {} : { receiving }) });
  }

  /** An established connection was lost: a new epoch begins, and the transport is not connected. */
  lost(detail: string, receiving?: boolean): void {
    this.change({ connected: false, detail, epoch: this.current.epoch + 1, ...(receiving === undefined ? {} : { receiving }) });
  }

  private change(next: TransportStatus): void {
    const previous = this.current;
    this.current = next;
    if (previous.connected === next.connected && previous.epoch === next.epoch) return;
    if (next.connected && !previous.connected && next.epoch > 0) {
      this.restoredAt = performance.now();
      this.presence.clear();
    }
    for (const listener of [...this.listeners]) {
      try {
        listener(next);
      } catch {
        // A listener's failure is its own; the others still hear the change.
      }
    }
  }
}

/**
 * The status half of `Transport`, written once: a transport extends this, keeps its `ConnectionStatus` in
 * `connection` and tells it what its links do. One whose status needs a fresh look first overrides `status()`.
 */
export abstract class StatusReporting {
  protected abstract readonly connection: ConnectionStatus;

  status(): TransportStatus {
    return this.connection.get();
  }

  onStatus(listener: StatusListener): () => void {
    return this.connection.on(listener);
  }
}
