// design decision 4 (docs/design.md), TG-19 (docs/requirements.md): request tool sets are cached per (sorted groups, state), bounded, per registry.
import { describe, expect, it } from 'vitest';
import { LruCache } from '../../../src/tools/registry/lru.js';
import { registryOf, textTool } from '../../support/registry-fixtures.js';

const tools = {
  a: textTool('a', { group: ['g1'] }),
  b: textTool('b', { group: ['g2'], 'applicable-states': ['s'] }),
};

describe('tool set cache', () => {
  it('returns the same object on a hit', () => {
    const { registry } = registryOf(tools);
    const first = registry.filter(['g1', 'g2'], 's');
    expect(registry.filter(['g1', 'g2'], 's')).toBe(first);
    expect(registry.cacheStats()).toMatchObject({ size: 1, hits: 1, misses: 1 });
  });

  it('keys on the normalized request: order, duplicates and defaults do not matter', () => {
    const { registry } = registryOf(tools);
    const set = registry.filter(['g2', 'g1'], 's');
    expect(registry.filter(['g1', 'g2', 'g1'], 's')).toBe(set);
    const defaults = registry.filter(null, null);
    expect(registry.filter(['default'], 'undefined')).toBe(defaults);
    expect(registry.filter(undefined, '')).toBe(defaults);
    expect(registry.filter('g1', null)).toBe(registry.filter(['g1'], 'undefined'));
    expect(registry.filter(['*', 'g1'], 's')).toBe(registry.filter('*', 's'));
  });

  it('different groups or states are different entries', () => {
    const { registry } = registryOf(tools);
    expect(registry.filter(['g1'], 's')).not.toBe(registry.filter(['g2'], 's'));
    expect(registry.filter(['g1'], 's')).not.toBe(registry.filter(['g1'], 't'));
    // Names that would collide under naive joining stay apart.
    expect(registry.filter(['a,b'], 's')).not.toBe(registry.filter(['a', 'b'], 's'));
    expect(registry.filter(['a\u0000b'], 's')).not.toBe(registry.filter(['a', 'b'], 's'));
    expect(registry.filter(['b'], 's\u0000a')).not.toBe(registry.filter(['a', 'b'], 's'));
    expect(registry.filter(['b'], 's\u0000a').state).toBe('s\u0000a');
  });

  it('is bounded (least recently used entries go first)', () => {
    const { registry } = registryOf(tools, {}, { cacheSize: 2 });
    const one = registry.filter(['g1'], 's1');
    registry.filter(['g1'], 's2');
    expect(registry.filter(['g1'], 's1')).toBe(one); // touch s1: s2 is now the oldest
    registry.filter(['g1'], 's3'); // evicts s2
    expect(registry.cacheStats().size).toBe(2);
    expect(registry.filter(['g1'], 's1')).toBe(one);
    const misses = registry.cacheStats().misses;
    registry.filter(['g1'], 's2');
    expect(registry.cacheStats().misses).toBe(misses + 1);
  });

  it('cache: false computes a fresh, equal set without touching the cache', () => {
    const { registry } = registryOf(tools);
    const cached = registry.filter(['g1'], 's');
    const fresh = registry.filter(['g1'], 's', { cache: false });
    expect(fresh).not.toBe(cached);
    expect(fresh.names).toEqual(cached.names);
    expect(registry.cacheStats()).toMatchObject({ size: 1, hits: 0, misses: 1 });
  });

  it('cacheSize 0 disables caching', () => {
    const { registry } = registryOf(tools, {}, { cacheSize: 0 });
    expect(registry.filter(['g1'], 's')).not.toBe(registry.filter(['g1'], 's'));
  });

  it('lives with the registry: a rebuild starts with an empty cache', () => {
    const first = registryOf(tools, {}, { version: 1 }).registry;
    const set = first.filter(['g1'], 's');
    const second = registryOf(tools, {}, { version: 2 }).registry;
    expect(second.filter(['g1'], 's')).not.toBe(set);
    expect(second.filter(['g1'], 's').version).toBe(2);
    expect(set.version).toBe(1);
  });

  it('hands out immutable tool sets', () => {
    const { registry } = registryOf(tools);
    const set = registry.filter(['g1', 'g2'], 's');
    expect(Object.isFrozen(set)).toBe(true);
    expect(Object.isFrozen(set.tools)).toBe(true);
    expect(Object.isFrozen(set.names)).toBe(true);
    expect(Object.isFrozen(set.filteredByGroup)).toBe(true);
    expect(Object.isFrozen(set.filteredByState)).toBe(true);
    expect(Object.isFrozen(set.groups)).toBe(true);
    expect(() => (set.names as string[]).push('x')).toThrow(TypeError);
  });
});

describe('LruCache', () => {
  it('evicts the least recently used entry', () => {
    const cache = new LruCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1);
    cache.set('c', 3);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
    expect(cache.size).toBe(2);
  });

  it('rejects a nonsensical capacity', () => {
    expect(() => new LruCache(-1)).toThrow(/non-negative integer/);
  });
});
