// A registry patched from the one it replaces (BuildRegistryInput.previous) is the registry a build from
// scratch gives, whatever the edit; the one it replaces stays as it was.
import { describe, expect, it } from 'vitest';
import type { McpDiscoveryLookup, McpToolDiscovery } from '../../../src/mcp/discovery-result.js';
import { discoveryArgumentSource } from '../../../src/mcp/mcp-tool-arguments.js';
import { SchemaCompiler } from '../../../src/mcp/schema-arguments.js';
import { AgentMetrics, ZERO_SERIES_TOOL_CAP } from '../../../src/observability/metrics.js';
import { ToolLoadCache } from '../../../src/tools/loading/tool-load-cache.js';
import { random } from '../../../bench/support/tools.js';
import { buildRegistry, buildRegistryInSlices, type BuildRegistryInput, type ToolRegistry } from '../../../src/tools/registry/registry.js';

const GROUPS = ['g0', 'g1', 'g2', 'default'];
const STATES = ['s0', 's1', 's2'];
const NAMES = Array.from({ length: 14 }, (_, i) => `n${i}`);

function discovered(mcpKey: string): McpToolDiscovery {
  const compiled = new SchemaCompiler().compile({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] });
  if (!compiled.ok) throw new Error(compiled.message);
  return { status: 'ok', mcpKey, remoteName: mcpKey, url: 'http://srv/mcp', schema: compiled.schema, description: null, fetchedAt: 0 };
}
const MCP = discoveryArgumentSource(new Map([['srv', discovered('srv')], ['srv2', discovered('srv2')]]) as McpDiscoveryLookup);

/** Everything a registry shows, as plain data. */
function contents(registry: ToolRegistry) {
  const asks: [string[] | string, string][] = [
    ['*', 's0'],
    [['g0'], 's1'],
    [['g1', 'g2'], 'undefined'],
    [['default'], 's2'],
    [[], 's0'],
  ];
  return {
    workspace: registry.workspace,
    version: registry.version,
    tools: registry.tools.map((t) => ({
      key: t.key,
      name: t.name,
      description: t.description,
      groups: t.groups,
      states: t.states === 'all' ? 'all' : [...t.states].sort(),
      next: t.nextState,
      prompt: t.prompt,
    })),
    byName: NAMES.map((name) => registry.get(name)?.key ?? null),
    problems: registry.problems.map((p) => [p.kind, p.key, p.severity, p.text]),
    services: [...registry.toolServices.keys()],
    groups: [...registry.knownGroups].sort(),
    states: [...registry.knownStates].sort(),
    mcp: [...registry.mcp].sort(([a], [b]) => (a < b ? -1 : 1)),
    offered: asks.map(([groups, state]) => {
      const set = registry.filter(groups, state);
      return [set.names, set.filteredByGroup, set.filteredByState, NAMES.map((name) => set.has(name))];
    }),
    listing: registry.listing(),
    availability: [registry.availability().groups, registry.availability().states].map((m) => [...m].sort()),
  };
}

/** One random tool value: mostly valid, sometimes broken, names from a small pool (so duplicates happen). */
function randomValue(rand: () => number, revision: number): string {
  const roll = rand();
  if (roll < 0.06) return '{"type": "knowledge-query", "name": ';
  if (roll < 0.1) return JSON.stringify({ type: 'knowledge-query', name: NAMES[0], group: 'not a list' });
  const pick = <T>(from: readonly T[], n: number): T[] => from.filter(() => rand() < n / from.length);
  const mcp = rand() < 0.3;
  return JSON.stringify({
    type: mcp ? 'mcp-tool' : 'knowledge-query',
    name: NAMES[Math.floor(rand() * NAMES.length)],
    description: `revision ${revision}`,
    group: pick(GROUPS, 1.5),
    ...(rand() < 0.7 ? { 'applicable-states': pick(STATES, 1.2) } : {}),
    ...(rand() < 0.3 ? { state: STATES[Math.floor(rand() * STATES.length)] } : {}),
    ...(mcp ? { 'mcp-tool': 'srv' } : {}),
  });
}

/** The same tool with one field changed (a description is what a patch handles; the others change the index). */
function edited(value: string, field: 'description' | 'state' | 'applicable-states' | 'group' | 'mcp-tool', rand: () => number, revision: number): string {
  let config: Record<string, unknown>;
  try {
    config = JSON.parse(value) as Record<string, unknown>;
  } catch {
    return value;
  }
  if (field === 'description') config.description = `revision ${revision}`;
  // s9 is named nowhere else: a target that adds a known state.
  else if (field === 'state') config.state = rand() < 0.3 ? undefined : [...STATES, 's9'][Math.floor(rand() * 4)];
  else if (field === 'applicable-states') config['applicable-states'] = rand() < 0.3 ? undefined : STATES.filter(() => rand() < 0.5);
  else if (field === 'group') config.group = GROUPS.filter(() => rand() < 0.4);
  else if (config.type === 'mcp-tool') config['mcp-tool'] = config['mcp-tool'] === 'srv' ? 'srv2' : 'srv';
  return JSON.stringify(config);
}
const OTHER_FIELDS = ['state', 'applicable-states', 'group', 'mcp-tool'] as const;

describe('a registry patched from the previous one', () => {
  it('equals a build from scratch over random edit sequences, and leaves the previous registry as it was', async () => {
    let patched = 0;
    let rebuilt = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const rand = random(seed);
      const tools: Record<string, string> = {};
      for (let i = 0; i < 12; i++) tools[`k${i.toString().padStart(2, '0')}`] = randomValue(rand, 0);
      const services = { svc: JSON.stringify({ id: 'svc', 'request-queue': 'rq', 'response-queue': 'sq' }) };
      const cache = new ToolLoadCache();
      const input = (version: number, previous?: ToolRegistry): BuildRegistryInput => ({
        workspace: 'ws',
        version,
        tools: Object.freeze({ ...tools }),
        toolServices: services,
        mcp: MCP,
        loadCache: cache,
        ...(previous ? { previous } : {}),
      });
      let registry = buildRegistry(input(1)).registry;
      for (let version = 2; version <= 14; version++) {
        const keys = Object.keys(tools);
        const key = keys[Math.floor(rand() * keys.length)]!;
        const roll = rand();
        // Mostly the edits a patch takes (descriptions), the rest change what the index holds.
        if (roll < 0.45) tools[key] = edited(tools[key]!, 'description', rand, version);
        else if (roll < 0.55) for (const k of keys) tools[k] = edited(tools[k]!, 'description', rand, version);
        else if (roll < 0.65) tools[key] = edited(tools[key]!, OTHER_FIELDS[Math.floor(rand() * 4)]!, rand, version);
        else if (roll < 0.75) tools[key] = randomValue(rand, version);
        else if (roll < 0.85) delete tools[key];
        else if (roll < 0.95) tools[`k${Math.floor(rand() * 40)}x`] = randomValue(rand, version);
        else services.svc = JSON.stringify({ id: 'svc', 'request-queue': `rq${version}`, 'response-queue': 'sq' });
        const before = contents(registry);
        const sliced = version % 2 === 0;
        const next = sliced ? (await buildRegistryInSlices(input(version, registry), 0)).registry : buildRegistry(input(version, registry)).registry;
        const scratch = buildRegistry({ ...input(version), loadCache: new ToolLoadCache() }).registry;
        expect(contents(next), `seed ${seed}, version ${version}`).toEqual(contents(scratch));
        expect(contents(registry), `seed ${seed}, version ${version}: the previous registry changed`).toEqual(before);
        if (next.sameToolNamesAs(registry)) patched++;
        else rebuilt++;
        registry = next;
      }
    }
    // Both ways were taken often, or the comparison above proves little.
    expect(patched).toBeGreaterThan(100);
    expect(rebuilt).toBeGreaterThan(100);
  });

  const base = (): Record<string, string> => ({
    a: JSON.stringify({ type: 'knowledge-query', name: 'alpha', group: ['g0'] }),
    b: JSON.stringify({ type: 'knowledge-query', name: 'beta', group: ['g1'], 'applicable-states': ['s1'] }),
    c: JSON.stringify({ type: 'text-completion', name: 'gamma' }),
  });

  it('patches a changed description in place: the new tool is served, the tables are shared', () => {
    const first = buildRegistry({ workspace: 'ws', version: 1, tools: base() }).registry;
    const tools = { ...base(), b: JSON.stringify({ type: 'knowledge-query', name: 'beta', description: 'new', group: ['g1'], 'applicable-states': ['s1'] }) };
    const second = buildRegistry({ workspace: 'ws', version: 2, tools, previous: first }).registry;
    expect(second.sameToolNamesAs(first)).toBe(true);
    expect(second.version).toBe(2);
    expect(second.get('beta')?.description).toBe('new');
    expect(second.filter(['g1'], 's1').tools.map((t) => t.description)).toEqual(['new']);
    // The prompt's tool list too: the selection copies prompt forms from the index, which must hold the new ones.
    expect(second.filter(['g1'], 's1', { cache: false }).promptTools.map((form) => form.description)).toEqual(['new']);
    expect(second.filter(['g1'], 's1', { cache: false }).names).toEqual(['beta']);
    expect(first.get('beta')?.description).toBe(null);
    expect(first.filter(['g1'], 's1').tools.map((t) => t.description)).toEqual([null]);
    expect(second.get('alpha')).toBe(first.get('alpha'));
  });

  it('builds from scratch when an entry turns bad, is added or removed, or changes its name, groups, states or state target', () => {
    const first = buildRegistry({ workspace: 'ws', version: 1, tools: base() }).registry;
    const cases: Record<string, Record<string, string>> = {
      bad: { ...base(), b: '{"type": "knowledge-query", "name": ' },
      added: { ...base(), d: JSON.stringify({ type: 'text-completion', name: 'delta' }) },
      removed: { a: base().a!, c: base().c! },
      regrouped: { ...base(), a: JSON.stringify({ type: 'knowledge-query', name: 'alpha', group: ['g2'] }) },
      renamed: { ...base(), c: JSON.stringify({ type: 'text-completion', name: 'gamma2' }) },
      retargeted: { ...base(), c: JSON.stringify({ type: 'text-completion', name: 'gamma', state: 's9' }) },
      restricted: { ...base(), b: JSON.stringify({ type: 'knowledge-query', name: 'beta', group: ['g1'], 'applicable-states': ['s2'] }) },
    };
    for (const [edit, tools] of Object.entries(cases)) {
      const next = buildRegistry({ workspace: 'ws', version: 2, tools, previous: first });
      const scratch = buildRegistry({ workspace: 'ws', version: 2, tools });
      expect(next.registry.sameToolNamesAs(first), edit).toBe(false);
      expect(contents(next.registry), edit).toEqual(contents(scratch.registry));
      expect(next.problems, edit).toEqual(scratch.problems);
    }
    const bad = buildRegistry({ workspace: 'ws', version: 2, tools: cases.bad, previous: first });
    expect(bad.problems.map((p) => [p.key, p.severity])).toEqual([['b', 'error']]);
    expect(bad.registry.get('beta')).toBeUndefined();
  });

  it('keeps a patched load in the load cache, so a later build from scratch reuses it', () => {
    const cache = new ToolLoadCache();
    const first = buildRegistry({ workspace: 'ws', version: 1, tools: base(), loadCache: cache }).registry;
    const changed = { ...base(), a: JSON.stringify({ type: 'knowledge-query', name: 'alpha', description: 'x', group: ['g0'] }) };
    const second = buildRegistry({ workspace: 'ws', version: 2, tools: changed, loadCache: cache, previous: first }).registry;
    expect(second.sameToolNamesAs(first)).toBe(true);
    const third = buildRegistry({ workspace: 'ws', version: 3, tools: { ...changed, d: base().c!.replace('gamma', 'delta') }, loadCache: cache, previous: second }).registry;
    expect(third.sameToolNamesAs(second)).toBe(false);
    expect(third.get('alpha')).toBe(second.get('alpha'));
  });

  it('leaves the metrics\' label values as they are after a patch, and updates them after a rename', async () => {
    const metrics = new AgentMetrics('agent', { defaultMetrics: false });
    const first = buildRegistry({ workspace: 'ws', version: 1, tools: base() }).registry;
    metrics.registryRebuilt(first, 0.01);
    const described = { ...base(), c: JSON.stringify({ type: 'text-completion', name: 'gamma', description: 'd' }) };
    const second = buildRegistry({ workspace: 'ws', version: 2, tools: described, previous: first }).registry;
    expect(second.sameToolNamesAs(first)).toBe(true);
    metrics.registryRebuilt(second, 0.01);
    expect(metrics.tool('gamma')).toBe('gamma');
    expect(metrics.group('g1')).toBe('g1');
    const text = await metrics.registry.metrics();
    expect(text).toContain('tg_agent_tool_group_availability{workspace="ws",group="g1",processor="agent"} 1');
    const renamed = { ...base(), c: JSON.stringify({ type: 'text-completion', name: 'gamma2' }) };
    const third = buildRegistry({ workspace: 'ws', version: 3, tools: renamed, previous: second }).registry;
    metrics.registryRebuilt(third, 0.01);
    expect(metrics.tool('gamma')).toBe('other');
    expect(metrics.tool('gamma2')).toBe('gamma2');
  });

  it('keeps a tool name known while any workspace still has it, and forgets it with the last one', () => {
    const metrics = new AgentMetrics('agent', { defaultMetrics: false });
    const one = buildRegistry({ workspace: 'one', version: 1, tools: base() }).registry;
    const two = buildRegistry({ workspace: 'two', version: 1, tools: { x: base().a! } }).registry;
    metrics.registryRebuilt(one, 0.01);
    metrics.registryRebuilt(two, 0.01);
    // Workspace one drops alpha; two still has it.
    const without = buildRegistry({ workspace: 'one', version: 2, tools: { b: base().b!, c: base().c! }, previous: one }).registry;
    metrics.registryRebuilt(without, 0.01);
    expect([metrics.tool('alpha'), metrics.group('g0'), metrics.tool('beta')]).toEqual(['alpha', 'g0', 'beta']);
    metrics.workspaceDeleted('two');
    expect([metrics.tool('alpha'), metrics.group('g0'), metrics.tool('beta'), metrics.state('s1')]).toEqual(['other', 'other', 'beta', 's1']);
    metrics.workspaceDeleted('one');
    expect([metrics.tool('beta'), metrics.state('s1'), metrics.group('default'), metrics.state('undefined')]).toEqual(['other', 'other', 'default', 'undefined']);
  });

  it('exports at most ZERO_SERIES_TOOL_CAP tools at 0 however many rebuilds add names, and frees the places of tools gone', async () => {
    const metrics = new AgentMetrics('agent', { defaultMetrics: false });
    const toolsNamed = (from: number, to: number): Record<string, string> =>
      Object.fromEntries(Array.from({ length: to - from }, (_, i) => [`k${from + i}`, JSON.stringify({ type: 'text-completion', name: `t${from + i}` })]));
    const zeroSeries = async (): Promise<string[]> =>
      (await metrics.scrape()).body.split('\n').filter((line) => line.startsWith('tg_agent_tool_invocation_total{') && line.endsWith(' 0'));
    metrics.registryRebuilt(buildRegistry({ workspace: 'a', version: 1, tools: toolsNamed(0, ZERO_SERIES_TOOL_CAP - 10) }).registry, 0.01);
    metrics.registryRebuilt(buildRegistry({ workspace: 'b', version: 1, tools: toolsNamed(1000, 1100) }).registry, 0.01);
    expect(await zeroSeries()).toHaveLength(ZERO_SERIES_TOOL_CAP);
    metrics.workspaceDeleted('a');
    expect(await zeroSeries()).toHaveLength(10);
    metrics.registryRebuilt(buildRegistry({ workspace: 'c', version: 1, tools: toolsNamed(2000, 2600) }).registry, 0.01);
    expect(await zeroSeries()).toHaveLength(ZERO_SERIES_TOOL_CAP);
  });
});
