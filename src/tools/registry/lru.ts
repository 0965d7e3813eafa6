/**
 * A bounded least-recently-used cache for request tool sets (design decision 4 (docs/design.md)). A hit is one `Map`
 * lookup and a counter write, so its cost does not depend on the cache size; the least recently used
 * entry is found by a scan only when a new entry must evict one (a miss, which is costlier anyway).
 */
import { InvalidUseError } from '../../errors/index.js';
interface Entry<V> {
  value: V;
  used: number;
}

export class LruCache<K, V> {
  private readonly entries = new Map<K, Entry<V>>();
  private clock = 0;
  private hitCount = 0;
  private missCount = 0;

  /** @param capacity maximum number of entries kept; 0 disables caching. */
  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 0) {
      throw new InvalidUseError(`LRU cache capacity must be a non-negative integer, got ${String(capacity)}`);
    }
  }

  /** The cached value, marked as most recently used; `undefined` on a miss. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) {
      this.missCount++;
      return undefined;
    }
    this.hitCount++;
    entry.used = ++this.clock;
    return entry.value;
  }

  /** Store a value, evicting the least recently used entry when full. */
  set(key: K, value: V): void {
    if (this.capacity === 0) return;
    const existing = this.entries.get(key);
    if (existing !== undefined) {
      existing.value = value;
      existing.used = ++this.clock;
      return;
    }
    if (this.entries.size >= this.capacity) this.evictOldest();
    this.entries.set(key, { value, used: ++this.clock });
  }

  private evictOldest(): void {
    let oldestKey: K | undefined;
    let oldest = Infinity;
    for (const [key, entry] of this.entries) {
      if (entry.used < oldest) {
        oldest = entry.used;
        oldestKey = key;
      }
    }
    if (oldest !== Infinity) this.entries.delete(oldestKey as K);
  }

  get size(): number {
    return this.entries.size;
  }

  get hits(): number {
    return this.hitCount;
  }

  get misses(): number {
    return this.missCount;
  }

  clear(): void {
    this.entries.clear();
  }
}
