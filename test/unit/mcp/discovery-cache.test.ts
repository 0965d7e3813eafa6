// The TTL / retry / refresh bookkeeping of MCP discovery, on an injected clock.
import { describe, expect, it } from 'vitest';
import { DiscoveryCache } from '../../../src/mcp/discovery-cache.js';
import { McpDiscoveryError } from '../../../src/mcp/errors.js';

function cacheAt(start = 1_000) {
  const clock = { now: start };
  const cache = new DiscoveryCache<string, string[]>({ ttlMs: 300_000, retryMs: 30_000, now: () => clock.now });
  return { clock, cache };
}

describe('discovery cache', () => {
  it('is due for an unknown key, not while fetching, and not again until the TTL has passed', () => {
    const { clock, cache } = cacheAt();
    expect(cache.state('s')).toEqual({ status: 'pending' });
    expect(cache.isDue('s')).toBe(true);
    expect(cache.begin('s')).toBe(true);
    expect(cache.begin('s')).toBe(false);
    expect(cache.isDue('s')).toBe(false);
    cache.succeed('s', ['a']);
    expect(cache.state('s')).toEqual({ status: 'ok', value: ['a'], fetchedAt: 1_000, expiresAt: 301_000 });
    clock.now = 300_999;
    expect(cache.isDue('s')).toBe(false);
    clock.now = 301_000;
    expect(cache.isDue('s')).toBe(true);
    // The old answer stays in use while it is fetched again.
    cache.begin('s');
    expect(cache.state('s')).toMatchObject({ status: 'ok', value: ['a'] });
  });

  it('retries a failure after the retry delay and counts failures in a row', () => {
    const { clock, cache } = cacheAt();
    cache.begin('s');
    cache.fail('s', new McpDiscoveryError('timeout', 'slow'));
    expect(cache.state('s')).toMatchObject({ status: 'failed', failedAt: 1_000, retryAt: 31_000, failures: 1 });
    clock.now = 30_999;
    expect(cache.isDue('s')).toBe(false);
    clock.now = 31_000;
    expect(cache.isDue('s')).toBe(true);
    cache.begin('s');
    cache.fail('s', new McpDiscoveryError('unreachable', 'down'));
    expect(cache.state('s')).toMatchObject({ status: 'failed', failures: 2 });
    cache.begin('s');
    cache.succeed('s', []);
    expect(cache.state('s').status).toBe('ok');
  });

  it('makes a key due at once when invalidated, or right after the running fetch', () => {
    const { cache } = cacheAt();
    cache.begin('s');
    cache.succeed('s', ['a']);
    expect(cache.isDue('s')).toBe(false);
    cache.invalidate('s');
    expect(cache.isDue('s')).toBe(true);
    cache.begin('s');
    cache.invalidate('s'); // config changed while fetching
    cache.succeed('s', ['b']);
    expect(cache.isDue('s')).toBe(true);
  });

  it('forgets keys no longer configured; late answers for them are dropped', () => {
    const { cache } = cacheAt();
    cache.begin('a');
    cache.begin('b');
    cache.retain(new Set(['a']));
    cache.succeed('b', ['late']);
    expect(cache.keys()).toEqual(['a']);
    expect(cache.state('b')).toEqual({ status: 'pending' });
  });

  it('says when a key is next due', () => {
    const { clock, cache } = cacheAt();
    expect(cache.nextDueAt('s')).toBe(clock.now);
    cache.begin('s');
    expect(cache.nextDueAt('s')).toBeUndefined();
    cache.succeed('s', []);
    expect(cache.nextDueAt('s')).toBe(301_000);
    cache.invalidate('s');
    expect(cache.nextDueAt('s')).toBe(clock.now);
  });
});
