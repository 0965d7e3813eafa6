/**
 * What discovery knows about each MCP endpoint: the last answer (kept for a TTL) or the last failure
 * (retried after a shorter delay), whether a fetch is running, and whether a refresh was asked for. It
 * only keeps state and answers "is this due?"; fetching is the caller's job. The clock is injected so
 * that tests can move time.
 */
import type { McpDiscoveryError } from './errors.js';

export type CacheState<V> =
  | { readonly status: 'pending' }
  | { readonly status: 'ok'; readonly value: V; readonly fetchedAt: number; readonly expiresAt: number }
  | {
      readonly status: 'failed';
      readonly error: McpDiscoveryError;
      readonly failedAt: number;
      readonly retryAt: number;
      /** Failures in a row. */
      readonly failures: number;
    };

interface Slot<V> {
  state: CacheState<V>;
  inFlight: boolean;
  /** A refresh was asked for (config change) — due now, or as soon as the running fetch ends. */
  invalidated: boolean;
}

export interface DiscoveryCacheOptions {
  /** How long an answer is used before it is fetched again. */
  readonly ttlMs: number;
  /** How long after a failure to try again. */
  readonly retryMs: number;
  readonly now?: () => number;
}

export class DiscoveryCache<K, V> {
  private readonly slots = new Map<K, Slot<V>>();
  private readonly now: () => number;

  constructor(private readonly options: DiscoveryCacheOptions) {
    this.now = options.now ?? Date.now;
  }

  private slot(key: K): Slot<V> {
    let slot = this.slots.get(key);
    if (slot === undefined) {
      slot = { state: { status: 'pending' }, inFlight: false, invalidated: false };
      this.slots.set(key, slot);
    }
    return slot;
  }

  /** The state of a key; `pending` when never fetched. */
  state(key: K): CacheState<V> {
    return this.slots.get(key)?.state ?? { status: 'pending' };
  }

  /** Whether a fetch should start now: never fetched, expired, failed long enough ago, or invalidated. */
  isDue(key: K): boolean {
    const slot = this.slots.get(key);
    if (slot === undefined) return true;
    if (slot.inFlight) return false;
    if (slot.invalidated) return true;
    const { state } = slot;
    if (state.status === 'pending') return true;
    return this.now() >= (state.status === 'ok' ? state.expiresAt : state.retryAt);
  }

  isInFlight(key: K): boolean {
    return this.slots.get(key)?.inFlight ?? false;
  }

  /** Mark a fetch as started; false when one is already running. */
  begin(key: K): boolean {
    const slot = this.slot(key);
    if (slot.inFlight) return false;
    slot.inFlight = true;
    slot.invalidated = false;
    return true;
  }

  succeed(key: K, value: V): void {
    const slot = this.slots.get(key);
    if (slot === undefined) return; // forgotten meanwhile (config change)
    const fetchedAt = this.now();
    slot.state = { status: 'ok', value, fetchedAt, expiresAt: fetchedAt + this.options.ttlMs };
    slot.inFlight = false;
  }

  fail(key: K, error: McpDiscoveryError): void {
    const slot = this.slots.get(key);
    if (slot === undefined) return;
    const failedAt = this.now();
    const failures = slot.state.status === 'failed' ? slot.state.failures + 1 : 1;
    slot.state = { status: 'failed', error, failedAt, retryAt: failedAt + this.options.retryMs, failures };
    slot.inFlight = false;
  }

  /** Ask for a refresh: due at once (or right after the running fetch). The last answer stays in use meanwhile. */
  invalidate(key: K): void {
    const slot = this.slots.get(key);
    if (slot !== undefined) slot.invalidated = true;
  }

  /** Forget every key not in `keys`. */
  retain(keys: ReadonlySet<K>): void {
    for (const key of [...this.slots.keys()]) if (!keys.has(key)) this.slots.delete(key);
  }

  keys(): K[] {
    return [...this.slots.keys()];
  }

  /** When a key is next due (ms since epoch); `now` when due already, undefined while a fetch runs. */
  nextDueAt(key: K): number | undefined {
    const slot = this.slots.get(key);
    if (slot === undefined || slot.invalidated || slot.state.status === 'pending') return slot?.inFlight ? undefined : this.now();
    if (slot.inFlight) return undefined;
    return slot.state.status === 'ok' ? slot.state.expiresAt : slot.state.retryAt;
  }
}
