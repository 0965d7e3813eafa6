import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { WorkspaceRegistries } from '../../../src/tools/registry/workspace-registries.js';
import { buildRegistry, buildRegistryInSlices, type BuildRegistryInput, type ToolRegistry } from '../../../src/tools/registry/registry.js';
import { runInSlices, runToEnd, type Steps } from '../../../src/threads/time-slices.js';
import { ToolLoadCache } from '../../../src/tools/loading/tool-load-cache.js';

const tool = (name: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ type: 'knowledge-query', name, group: [`g${name.length % 3}`], 'applicable-states': ['s1'], ...extra });

/** `count` valid tools keyed k00000…, with a bad entry (not JSON) in the middle. */
function workspaceTools(count: number, revision = 0): Record<string, string> {
  const tools: Record<string, string> = {};
  for (let i = 0; i < count; i++) tools[`k${String(i).padStart(5, '0')}`] = tool(`t${i}`, revision ? { description: `r${revision}` } : {});
  tools[`k${String(Math.floor(count / 2)).padStart(5, '0')}x`] = '{"type": "knowledge-query", "name": ';
  return tools;
}

/** Counts the macrotasks that ran while `work` was pending: more than one means it gave the event loop back. */
async function countingTurns<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let pending = true;
  const tick = (): void => {
    if (!pending) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  const value = await work();
  pending = false;
  return { value, turns };
}

/** What a registry offers, as plain data. */
function contents(registry: ToolRegistry) {
  return {
    version: registry.version,
    tools: registry.tools.map((t) => [t.key, t.name, t.description]),
    problems: registry.problems.map((p) => [p.key, p.severity, p.text]),
    groups: [...registry.knownGroups].sort(),
    states: [...registry.knownStates].sort(),
    offered: registry.filter(['g0', 'g1'], 's1').names,
  };
}

describe('time slices', () => {
  it('runs every step either way and gives the same result', async () => {
    function* steps(): Steps<number> {
      let sum = 0;
      for (let i = 1; i <= 1000; i++) {
        sum += i;
        yield;
      }
      return sum;
    }
    expect(runToEnd(steps())).toBe(500_500);
    const { value, turns } = await countingTurns(() => runInSlices(steps(), 0));
    expect(value).toBe(500_500);
    expect(turns).toBeGreaterThan(1);
  });

  it('rejects with the error of a step that throws', async () => {
    function* steps(): Steps<void> {
      yield;
      throw new Error('step failed');
    }
    await expect(runInSlices(steps())).rejects.toThrow('step failed');
  });
});

describe('building a registry in slices', () => {
  const input: BuildRegistryInput = {
    workspace: 'w',
    version: 4,
    tools: workspaceTools(3000),
    toolServices: { broken: '{"request-queue": 1}' },
  };

  it('gives what the one-go build gives, a bad entry mid-chunk included, and yields the event loop', async () => {
    const whole = buildRegistry(input).registry;
    const { value, turns } = await countingTurns(() => buildRegistryInSlices(input, 0));
    expect(contents(value.registry)).toEqual(contents(whole));
    expect(value.registry.tools).toHaveLength(3000);
    expect(value.problems.some((p) => p.key === 'k01500x' && p.severity === 'error')).toBe(true);
    expect(value.problems.some((p) => p.kind === 'tool-service' && p.key === 'broken')).toBe(true);
    expect(turns).toBeGreaterThan(10);
  });

  it('keeps the greatest key of a duplicate name and reports the others, across many slices', async () => {
    const tools: Record<string, string> = {};
    // 300 keys, every name used three times (keys a…, b…, c…): c… wins each.
    for (let i = 0; i < 100; i++) for (const prefix of ['a', 'b', 'c']) tools[`${prefix}${String(i).padStart(3, '0')}`] = tool(`dup${i}`, { description: prefix });
    const whole = buildRegistry({ workspace: 'w', version: 1, tools }).registry;
    const sliced = (await buildRegistryInSlices({ workspace: 'w', version: 1, tools }, 0)).registry;
    expect(contents(sliced)).toEqual(contents(whole));
    expect(sliced.tools).toHaveLength(100);
    expect(sliced.get('dup42')?.key).toBe('c042');
    expect(sliced.problems.filter((p) => p.field === 'name')).toHaveLength(200);
    expect(sliced.problems.find((p) => p.key === 'a042')?.text).toContain('"c042"');
    expect(Object.isFrozen(sliced.problems) && sliced.problems.every((p) => Object.isFrozen(p))).toBe(true);
  });

  it('reuses unchanged entries and loads changed, added and removed ones anew', async () => {
    const loadCache = new ToolLoadCache();
    const tools = workspaceTools(2000);
    const first = (await buildRegistryInSlices({ workspace: 'w', version: 1, tools, loadCache }, 0)).registry;
    const next: Record<string, string> = { ...tools };
    next.k00010 = tool('t10', { description: 'changed' });
    delete next.k01000;
    next.k01999a = tool('added');
    next.k00500x = 'not json either';
    const second = (await buildRegistryInSlices({ workspace: 'w', version: 2, tools: next, loadCache }, 0)).registry;

    expect(second.get('t0')).toBe(first.get('t0'));
    expect(second.get('t1999')).toBe(first.get('t1999'));
    expect(second.get('t10')).not.toBe(first.get('t10'));
    expect(second.get('t10')?.description).toBe('changed');
    expect(second.get('t1000')).toBeUndefined();
    expect(second.get('added')?.key).toBe('k01999a');
    expect(second.problems.map((p) => p.key).sort()).toEqual(['k00500x', 'k01000x']);
    // The same contents as a build from nothing.
    expect(contents(second)).toEqual(contents(buildRegistry({ workspace: 'w', version: 2, tools: next }).registry));
  });
});

describe('swapping registries', () => {
  const logger = pino({ level: 'silent' });

  it('serves the previous registry, whole, until the new one is complete', async () => {
    const rebuilt: ToolRegistry[] = [];
    const registries = new WorkspaceRegistries(logger, (registry) => rebuilt.push(registry));
    const old = await registries.rebuild('w', { tool: workspaceTools(500) }, 1);
    const seen: ToolRegistry[] = [];
    let building = true;
    const look = (): void => {
      if (!building) return;
      seen.push(registries.get('w'));
      setImmediate(look);
    };
    setImmediate(look);
    const fresh = await registries.rebuild('w', { tool: workspaceTools(3000, 1) }, 2);
    building = false;

    expect(seen.length).toBeGreaterThan(1);
    for (const registry of seen) expect(registry === old || registry === fresh).toBe(true);
    expect(seen[0]).toBe(old);
    expect(old.tools).toHaveLength(500);
    expect(registries.get('w')).toBe(fresh);
    expect(fresh.version).toBe(2);
    expect(fresh.tools).toHaveLength(3000);
    expect(rebuilt).toEqual([old, fresh]);
  });

  it('applies rebuilds of a workspace in the order asked, so the newest stays', async () => {
    const registries = new WorkspaceRegistries(logger);
    const builds = [
      registries.rebuild('w', { tool: workspaceTools(2000) }, 1),
      registries.rebuild('w', { tool: workspaceTools(10) }, 2),
      registries.rebuild('w', { tool: workspaceTools(1000, 3) }, 3),
    ];
    expect(registries.latestVersion('w')).toBe(3);
    const done = await Promise.all(builds);
    expect(done.map((r) => r.version)).toEqual([1, 2, 3]);
    expect(registries.get('w')).toBe(done[2]);
    expect(registries.get('w').tools).toHaveLength(1000);
  });

  it('does not bring back a workspace deleted while its registry was being built', async () => {
    const registries = new WorkspaceRegistries(logger);
    const building = registries.rebuild('w', { tool: workspaceTools(2000) }, 1);
    registries.delete('w');
    const built = await building;
    expect(built.tools).toHaveLength(2000);
    expect(registries.all()).toEqual([]);
    expect(registries.get('w').tools).toEqual([]);
  });
});
