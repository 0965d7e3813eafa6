// design decision 9 (docs/design.md): the discovery service — `mcp` config → background tools/list → per-workspace snapshot —
// with a scripted lister and an injected clock (the real client is tested in tools-list-client.test.ts).
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { WorkspaceChange } from '../../../src/config/config-watcher.js';
import { McpDiscoveryError, type DiscoveryFailureReason } from '../../../src/mcp/errors.js';
import { McpDiscovery } from '../../../src/mcp/discovery.js';
import type { ListedMcpTool, McpEndpoint } from '../../../src/mcp/tools-list-client.js';

const SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const tool = (name: string, inputSchema: unknown = SCHEMA): ListedMcpTool => ({ name, description: `${name} tool`, inputSchema });

function mcpChange(values: Record<string, unknown>, workspace = 'ws'): WorkspaceChange {
  const mcp = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
  return { workspace, changedTypes: ['mcp'], snapshot: { mcp }, version: 1 };
}

function setup(options: { ttlMs?: number; retryMs?: number } = {}) {
  const clock = { now: 1_000_000 };
  const calls: McpEndpoint[] = [];
  const changes: string[] = [];
  const failures: [string, DiscoveryFailureReason][] = [];
  const failing: number[] = [];
  let answer: (endpoint: McpEndpoint) => Promise<readonly ListedMcpTool[]> = async () => [tool('weather')];
  const discovery = new McpDiscovery({
    ttlMs: options.ttlMs ?? 60_000,
    retryMs: options.retryMs ?? 5_000,
    timeoutMs: 1_000,
    logger: pino({ level: 'silent' }),
    now: () => clock.now,
    list: (endpoint) => {
      calls.push(endpoint);
      return answer(endpoint);
    },
    onChange: (workspace) => changes.push(workspace),
    telemetry: {
      discoveryFailed: (_workspace, mcpKey, reason) => failures.push([mcpKey, reason]),
      discoveryStatus: (_workspace, count) => failing.push(count),
    },
  });
  return {
    clock,
    calls,
    changes,
    failures,
    failing,
    discovery,
    answer: (fn: typeof answer) => (answer = fn),
  };
}

describe('MCP discovery', () => {
  it('asks each distinct server once, with its token, and fills the snapshot in the background', async () => {
    const t = setup();
    const releases: (() => void)[] = [];
    t.answer(() => new Promise((resolve) => releases.push(() => resolve([tool('weather'), tool('forecast')]))));
    t.discovery.onConfig(
      mcpChange({
        weather: { url: 'http://srv/mcp', 'auth-token': 'tok' },
        forecast: { url: 'http://srv/mcp', 'auth-token': 'tok' },
        other: { url: 'http://srv/mcp' },
      }),
    );
    // Nothing waits: the snapshot exists at once, pending.
    expect(t.discovery.lookup('ws')?.get('weather')?.status).toBe('pending');
    expect(t.changes).toEqual(['ws']);
    expect(t.calls).toEqual([
      { url: 'http://srv/mcp', authToken: 'tok' },
      { url: 'http://srv/mcp', authToken: undefined },
    ]);
    releases.forEach((release) => release());
    await t.discovery.idle();
    const weather = t.discovery.lookup('ws')?.get('weather');
    expect(weather).toMatchObject({ status: 'ok', remoteName: 'weather', description: 'weather tool', url: 'http://srv/mcp' });
    expect(weather?.status === 'ok' && weather.schema.arguments.map((a) => a.name)).toEqual(['city']);
    expect(t.discovery.lookup('ws')?.get('forecast')?.status).toBe('ok');
    expect(t.changes.length).toBeGreaterThanOrEqual(2);
  });

  it('does not ask again before the TTL, and does after it', async () => {
    const t = setup({ ttlMs: 60_000 });
    t.discovery.onConfig(mcpChange({ weather: { url: 'http://srv/mcp' } }));
    await t.discovery.idle();
    expect(t.calls).toHaveLength(1);
    const changes = t.changes.length;
    t.clock.now += 59_999;
    t.discovery.kick();
    await t.discovery.idle();
    expect(t.calls).toHaveLength(1);
    t.clock.now += 1;
    t.discovery.kick();
    await t.discovery.idle();
    expect(t.calls).toHaveLength(2);
    // Same answer: no rebuild.
    expect(t.changes).toHaveLength(changes);
  });

  it('falls back on failure (visible in the snapshot, counted per entry), retries, and recovers', async () => {
    const t = setup({ retryMs: 5_000 });
    t.answer(async () => {
      throw new McpDiscoveryError('unreachable', 'cannot reach MCP server http://srv/mcp (ECONNREFUSED)');
    });
    t.discovery.onConfig(mcpChange({ weather: { url: 'http://srv/mcp' }, forecast: { url: 'http://srv/mcp' } }));
    await t.discovery.idle();
    expect(t.discovery.lookup('ws')?.get('weather')).toMatchObject({
      status: 'failed',
      reason: 'unreachable',
      error: 'cannot reach MCP server http://srv/mcp (ECONNREFUSED)',
    });
    expect(t.failures).toEqual([
      ['forecast', 'unreachable'],
      ['weather', 'unreachable'],
    ]);
    expect(t.failing.at(-1)).toBe(2);
    t.clock.now += 4_999;
    t.discovery.kick();
    expect(t.calls).toHaveLength(1);
    t.answer(async () => [tool('weather'), tool('forecast')]);
    t.clock.now += 1;
    const changes = t.changes.length;
    t.discovery.kick();
    await t.discovery.idle();
    expect(t.calls).toHaveLength(2);
    expect(t.discovery.lookup('ws')?.get('weather')?.status).toBe('ok');
    expect(t.failing.at(-1)).toBe(0);
    expect(t.changes.length).toBe(changes + 1);
  });

  it('judges each tool on its own: not listed, malformed schema, fine', async () => {
    const t = setup();
    t.answer(async () => [tool('weather'), tool('broken', { type: 'string' })]);
    t.discovery.onConfig(
      mcpChange({
        weather: { url: 'http://srv/mcp' },
        broken: { url: 'http://srv/mcp' },
        ghost: { url: 'http://srv/mcp', 'remote-name': 'phantom' },
      }),
    );
    await t.discovery.idle();
    const lookup = t.discovery.lookup('ws')!;
    expect(lookup.get('weather')?.status).toBe('ok');
    expect(lookup.get('broken')).toMatchObject({ status: 'failed', reason: 'malformed-schema' });
    expect(lookup.get('ghost')).toMatchObject({ status: 'failed', reason: 'tool-not-listed' });
    const ghost = lookup.get('ghost');
    expect(ghost?.status === 'failed' && ghost.error).toBe(
      'MCP server http://srv/mcp does not list a tool named "phantom" (it lists: weather, broken); check "remote-name" of mcp entry "ghost" (default: the key)',
    );
    expect(t.failures.sort()).toEqual([
      ['broken', 'malformed-schema'],
      ['ghost', 'tool-not-listed'],
    ]);
  });

  it('asks again at once when the mcp config changes, and forgets removed entries', async () => {
    const t = setup();
    t.discovery.onConfig(mcpChange({ weather: { url: 'http://srv/mcp' }, old: { url: 'http://old/mcp' } }));
    await t.discovery.idle();
    expect(t.calls).toHaveLength(2);
    t.discovery.onConfig(mcpChange({ weather: { url: 'http://srv/mcp' } }));
    await t.discovery.idle();
    expect(t.calls.map((c) => c.url)).toEqual(['http://old/mcp', 'http://srv/mcp', 'http://srv/mcp']);
    expect([...t.discovery.lookup('ws')!.keys()]).toEqual(['weather']);
  });

  it('reports invalid entries as failed with reason bad-config', () => {
    const t = setup();
    t.discovery.onConfig(mcpChange({ bad: { 'remote-name': 'x' } }));
    expect(t.discovery.lookup('ws')?.get('bad')).toMatchObject({ status: 'failed', reason: 'bad-config' });
    expect(t.failures).toEqual([['bad', 'bad-config']]);
    expect(t.calls).toEqual([]);
    expect(t.discovery.listing('ws').problems).toEqual([
      'workspace "ws", mcp key "bad": field "url": required: the MCP server URL (http:// or https://)',
    ]);
  });

  it('ignores changes of other config types and knows nothing of unseen workspaces', () => {
    const t = setup();
    t.discovery.onConfig({ workspace: 'ws', changedTypes: ['tool'], snapshot: {}, version: 2 });
    expect(t.discovery.lookup('ws')).toBeUndefined();
    expect(t.changes).toEqual([]);
  });

  it('lists entries without tokens', async () => {
    const t = setup();
    t.discovery.onConfig(mcpChange({ weather: { url: 'http://user:pw@srv/mcp', 'auth-token': 'tok-secret' } }));
    await t.discovery.idle();
    const listing = t.discovery.listing('ws');
    expect(listing).toMatchObject({ enabled: true, ttlSeconds: 60, timeoutSeconds: 1 });
    expect(listing.entries).toEqual([
      {
        key: 'weather',
        url: 'http://***@srv/mcp',
        remoteName: 'weather',
        auth: true,
        status: 'ok',
        reason: null,
        error: null,
        checkedAt: new Date(t.clock.now).toISOString(),
        nextCheckAt: new Date(t.clock.now + 60_000).toISOString(),
        refreshing: false,
        arguments: [{ name: 'city', type: 'string', description: '', required: true }],
      },
    ]);
    expect(JSON.stringify(listing)).not.toContain('tok-secret');
    expect(JSON.stringify(listing)).not.toContain('pw');
  });

  it('stops: running exchanges are abandoned and nothing new starts', async () => {
    const t = setup();
    t.answer(() => new Promise(() => {}));
    t.discovery.onConfig(mcpChange({ weather: { url: 'http://srv/mcp' } }));
    const stopped = t.discovery.stop();
    // The scripted lister ignores the abort signal; stop() must not wait for it (were it to, this test would time out).
    await stopped;
    t.discovery.onConfig(mcpChange({ other: { url: 'http://other/mcp' } }));
    t.discovery.kick();
    expect(t.calls).toHaveLength(1);
  });

  it('forgets a deleted workspace; late answers are dropped', async () => {
    const t = setup();
    let release: () => void = () => {};
    t.answer(() => new Promise((resolve) => (release = () => resolve([tool('weather')]))));
    t.discovery.onConfig(mcpChange({ weather: { url: 'http://srv/mcp' } }));
    t.discovery.onWorkspaceDeleted('ws');
    const changes = t.changes.length;
    release();
    await t.discovery.idle();
    expect(t.discovery.lookup('ws')).toBeUndefined();
    expect(t.changes).toHaveLength(changes);
  });
});
