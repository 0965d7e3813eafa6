/**
 * ConfigWatcher against the config stand-in on the in-process bus: the initial load, pushes applied type by
 * type, old and garbage pushes ignored, a config service that answers late, a workspace deleted, and a resync
 * after a connection loss that swallowed a push.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryTransport } from '../../../src/bus/memory/memory-transport.js';
import { ConfigClient } from '../../../src/config/config-client.js';
import { ConfigWatcher, type WorkspaceChange } from '../../../src/config/config-watcher.js';
import { startConfigService, type ConfigServiceStandIn } from '../../../dev/stand-ins/config-service.js';
import { waitUntil } from '../../support/agent-harness.js';
import { uniqueSuffix } from '../../../dev/flow-config.js';

const logger = pino({ level: 'silent' });
const TYPES = ['tool', 'tool-service'];

interface Setup {
  bus: MemoryTransport;
  config: ConfigServiceStandIn;
  watcher: ConfigWatcher;
  changes: WorkspaceChange[];
  deleted: string[];
}

let running: Setup | undefined;
afterEach(async () => {
  await running?.watcher.stop();
  await running?.config.stop();
  await running?.bus.close();
  running = undefined;
});

/** A config stand-in holding `before` (workspace → tool key → value), and a watcher of `tool` and `tool-service`. */
async function setup(before: Record<string, Record<string, object>> = {}, available = true): Promise<Setup> {
  const bus = new MemoryTransport();
  const suffix = uniqueSuffix(6);
  const queues = { request: `request:tg:config-${suffix}`, response: `response:tg:config-${suffix}`, push: `notify:tg:config-${suffix}` };
  const config = await startConfigService({ transport: bus, queues });
  for (const [workspace, tools] of Object.entries(before)) {
    await config.putMany(workspace, Object.entries(tools).map(([key, value]) => ({ type: 'tool', key, value })));
  }
  await config.put('ws-other', 'prompt', 'not-watched', { x: 1 });
  config.available = available;
  const changes: WorkspaceChange[] = [];
  const deleted: string[] = [];
  const watcher = new ConfigWatcher({
    transport: bus,
    client: new ConfigClient({ transport: bus, requestQueue: queues.request, responseQueue: queues.response, timeoutMs: 500, logger }),
    pushQueue: queues.push,
    types: TYPES,
    onChange: (change) => void changes.push(change),
    onWorkspaceDeleted: (workspace) => void deleted.push(workspace),
    logger,
    retryDelayMs: 20,
  });
  running = { bus, config, watcher, changes, deleted };
  return running;
}

const applied = (s: Setup) => waitUntil(() => s.watcher.currentVersion >= s.config.version, `config version ${s.config.version}`, 5_000);

describe('ConfigWatcher', () => {
  it('loads every workspace\'s watched types once, at the service\'s version', async () => {
    const s = await setup({ 'ws-a': { t1: { name: 'one' } }, 'ws-b': { t2: { name: 'two' } } });
    await s.watcher.start();
    expect(s.watcher.isLoaded).toBe(true);
    expect(s.watcher.currentVersion).toBe(s.config.version);
    expect(s.changes.map((c) => [c.workspace, [...c.changedTypes]])).toEqual([
      ['ws-a', TYPES],
      ['ws-b', TYPES],
    ]);
    expect(JSON.parse(s.changes[0]!.snapshot.tool!.t1!)).toEqual({ name: 'one' });
    expect(s.changes.some((c) => c.workspace === 'ws-other')).toBe(false);
  });

  it('applies a push by fetching only the types and workspace it names', async () => {
    const s = await setup({ 'ws-a': { t1: { name: 'one' } } });
    await s.watcher.start();
    s.changes.length = 0;
    await s.config.put('ws-a', 'tool-service', 'svc', { id: 'svc' });
    await applied(s);
    expect(s.changes).toHaveLength(1);
    expect(s.changes[0]).toMatchObject({ workspace: 'ws-a', changedTypes: ['tool-service'], version: s.config.version });
    // The snapshot keeps what was loaded before.
    expect(Object.keys(s.changes[0]!.snapshot.tool!)).toEqual(['t1']);
    expect(Object.keys(s.changes[0]!.snapshot['tool-service']!)).toEqual(['svc']);
  });

  it('ignores pushes at or below its version and pushes that do not decode, and keeps applying later ones', async () => {
    const s = await setup({ 'ws-a': { t1: { name: 'one' } } });
    await s.watcher.start();
    s.changes.length = 0;
    const version = s.watcher.currentVersion;
    await s.config.push({ version, changes: { tool: ['ws-a'] } });
    await s.config.pushRaw('not json');
    await s.config.pushRaw('{"version": "seven"}');
    await s.config.put('ws-a', 'tool', 't2', { name: 'two' });
    await applied(s);
    expect(s.changes.map((c) => c.version)).toEqual([version + 1]);
    expect(s.watcher.applyFailure).toBeUndefined();
  });

  it('retries the initial load until the config service answers', async () => {
    const s = await setup({ 'ws-a': { t1: { name: 'one' } } }, false);
    const started = s.watcher.start();
    await waitUntil(() => s.config.calls.length >= 2, 'two load attempts', 5_000);
    expect(s.watcher.isLoaded).toBe(false);
    s.config.available = true;
    await started;
    expect(s.watcher.isLoaded).toBe(true);
    expect(s.changes.map((c) => c.workspace)).toEqual(['ws-a']);
  });

  it('forgets a deleted workspace and says so once', async () => {
    const s = await setup({ 'ws-a': { t1: { name: 'one' } } });
    await s.watcher.start();
    await s.config.push({ version: s.config.version + 1, changes: {}, workspace_changes: { created: [], deleted: ['ws-a', 'ws-never-seen'] } });
    await waitUntil(() => s.deleted.length > 0, 'the deletion');
    expect(s.deleted).toEqual(['ws-a']);
  });

  it('re-reads everything after a connection loss, so a change whose push was lost still applies', async () => {
    const s = await setup({ 'ws-a': { t1: { name: 'one' } } });
    await s.watcher.start();
    s.changes.length = 0;
    s.bus.dropConnection();
    // Stored, but its push cannot be published while the bus is down.
    await s.config.put('ws-a', 'tool', 't1', { name: 'changed' }).catch(() => undefined);
    s.bus.restoreConnection();
    await applied(s);
    expect(s.changes.map((c) => [c.workspace, [...c.changedTypes]])).toEqual([['ws-a', ['tool']]]);
    expect(JSON.parse(s.changes[0]!.snapshot.tool!.t1!)).toEqual({ name: 'changed' });
  });
});
