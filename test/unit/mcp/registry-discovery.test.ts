// design decision 9 (docs/design.md) in the registry: discovered arguments for mcp-tools that declare none, drift reports for
// those that do, fallbacks on failure — built synchronously from a discovery snapshot.
import { describe, expect, it } from 'vitest';
import type { McpDiscoveryLookup, McpToolDiscovery } from '../../../src/mcp/discovery-result.js';
import { discoveryArgumentSource } from '../../../src/mcp/mcp-tool-arguments.js';
import { SchemaCompiler } from '../../../src/mcp/schema-arguments.js';
import { buildRegistry } from '../../../src/tools/registry/registry.js';

const SEARCH_SCHEMA = {
  type: 'object',
  properties: {
    query: { type: 'string', description: 'What to search for' },
    filter: { type: 'object', properties: { since: { type: 'string' } }, required: ['since'] },
  },
  required: ['query'],
};

function ok(mcpKey: string, schema: unknown, remoteName = mcpKey): McpToolDiscovery {
  const compiled = new SchemaCompiler().compile(schema);
  if (!compiled.ok) throw new Error(compiled.message);
  return { status: 'ok', mcpKey, remoteName, url: 'http://srv/mcp', schema: compiled.schema, description: null, fetchedAt: 0 };
}

const lookupOf = (...entries: McpToolDiscovery[]): McpDiscoveryLookup => new Map(entries.map((e) => [e.mcpKey, e]));

const mcpTool = (name: string, mcpKey: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ type: 'mcp-tool', name, description: `${name}!`, 'mcp-tool': mcpKey, ...extra });

function build(tools: Record<string, string>, mcp?: McpDiscoveryLookup) {
  return buildRegistry({ workspace: 'ws', version: 3, tools, ...(mcp ? { mcp: discoveryArgumentSource(mcp) } : {}) });
}

describe('registry with MCP discovery', () => {
  it('gives an mcp-tool without arguments the server\'s arguments, prompt form and validator', () => {
    const { registry, problems } = build({ search: mcpTool('search', 'search-srv') }, lookupOf(ok('search-srv', SEARCH_SCHEMA)));
    expect(problems).toEqual([]);
    const tool = registry.get('search')!;
    expect(tool.prompt.arguments).toEqual([
      { name: 'query', type: 'string', description: 'What to search for', required: true },
      { name: 'filter', type: 'object', description: 'A JSON object with fields: since (string, required).', required: false },
    ]);
    expect(tool.arguments).toBe(tool.validator.arguments);
    const bad = tool.validator.validate({ query: 'x', filter: { since: { year: 2024 } } });
    expect(bad.ok === false && bad.errors.map((e) => e.message)).toEqual(['argument "filter.since" must be a string, got an object']);
    expect(registry.mcp.get('search')).toEqual({
      mcpKey: 'search-srv',
      remoteName: 'search-srv',
      source: 'discovered',
      discovery: 'ok',
      reason: null,
      error: null,
      drift: [],
    });
  });

  it('keeps declared arguments as the contract and reports drift as warnings', () => {
    const declared = [
      { name: 'query', type: 'integer', description: 'q' },
      { name: 'page', type: 'number', description: 'p', required: false },
    ];
    const { registry, problems } = build({ s: mcpTool('search', 'search-srv', { arguments: declared }) }, lookupOf(ok('search-srv', SEARCH_SCHEMA)));
    const tool = registry.get('search')!;
    expect(tool.arguments.map((a) => [a.name, a.type])).toEqual([
      ['query', 'integer'],
      ['page', 'number'],
    ]);
    expect(tool.validator.validate({ query: '12' })).toMatchObject({ ok: true, value: { query: 12 } });
    const report = registry.mcp.get('search')!;
    expect(report.source).toBe('declared');
    expect(report.drift.map((d) => [d.kind, d.argument])).toEqual([
      ['type', 'query'],
      ['missing', 'page'],
      ['extra', 'filter'],
    ]);
    expect(problems.every((p) => p.severity === 'warning' && p.field === 'arguments')).toBe(true);
    expect(problems[0]!.text).toBe(
      'workspace "ws", tool key "s" (name "search"): warning: field "arguments": drift from MCP tool "search-srv" (mcp key "search-srv"): ' +
        'argument "query" is declared integer but the server\'s input schema says string; the declared arguments stay in force',
    );
    expect(registry.listing().tools[0]?.mcp?.drift).toHaveLength(3);
  });

  it('falls back when discovery failed or has not answered yet', () => {
    const failed: McpToolDiscovery = {
      status: 'failed',
      mcpKey: 'down',
      remoteName: 'down',
      url: 'http://srv/mcp',
      reason: 'unreachable',
      error: 'cannot reach MCP server http://srv/mcp (ECONNREFUSED)',
      failedAt: 0,
    };
    const pending: McpToolDiscovery = { status: 'pending', mcpKey: 'later', remoteName: 'later', url: 'http://srv/mcp' };
    const { registry, problems } = build(
      {
        a: mcpTool('bare', 'down'),
        b: mcpTool('pinned', 'down', { arguments: [{ name: 'q', type: 'string' }] }),
        c: mcpTool('waiting', 'later'),
      },
      lookupOf(failed, pending),
    );
    expect(registry.get('bare')!.arguments).toEqual([]);
    expect(registry.get('bare')!.validator.validate({ anything: 1 }).ok).toBe(true);
    expect(registry.get('pinned')!.arguments.map((a) => a.name)).toEqual(['q']);
    expect(registry.get('waiting')!.arguments).toEqual([]);
    expect(registry.mcp.get('bare')).toMatchObject({ source: 'none', discovery: 'failed', reason: 'unreachable' });
    expect(registry.mcp.get('pinned')).toMatchObject({ source: 'declared', discovery: 'failed' });
    expect(registry.mcp.get('waiting')).toMatchObject({ source: 'none', discovery: 'pending' });
    expect(problems.map((p) => [p.name, p.severity, p.field])).toEqual([
      ['bare', 'warning', 'arguments'],
      ['pinned', 'warning', 'mcp-tool'],
    ]);
    expect(problems[0]!.message).toContain('could not be discovered (unreachable); the tool is offered without arguments');
  });

  it('warns about an mcp-tool whose key is not in config type "mcp"', () => {
    const { registry, problems } = build({ a: mcpTool('orphan', 'nowhere') }, lookupOf());
    expect(registry.mcp.get('orphan')).toMatchObject({ discovery: 'not-configured', source: 'none' });
    expect(problems[0]!.message).toContain('no entry "nowhere" in config type "mcp"');
  });

  it('changes nothing when discovery is off', () => {
    const { registry, problems } = build({ a: mcpTool('plain', 'srv') });
    expect(problems).toEqual([]);
    expect(registry.mcp.size).toBe(0);
    expect(registry.get('plain')!.arguments).toEqual([]);
    expect(registry.listing().tools[0]).not.toHaveProperty('mcp');
  });

  it('builds every mcp-tool with the same fields in the same order, discovered or not (monomorphic tools)', () => {
    const { registry } = build(
      {
        a: mcpTool('discovered', 'search-srv'),
        b: mcpTool('declared', 'search-srv', { arguments: [{ name: 'query', type: 'string' }] }),
        c: JSON.stringify({ type: 'knowledge-query', name: 'kq' }),
      },
      lookupOf(ok('search-srv', SEARCH_SCHEMA)),
    );
    const plain = build({ a: mcpTool('plain', 'x') }).registry.get('plain')!;
    const shape = Object.keys(plain);
    expect(Object.keys(registry.get('discovered')!)).toEqual(shape);
    expect(Object.keys(registry.get('declared')!)).toEqual(shape);
    expect(Object.isFrozen(registry.get('discovered'))).toBe(true);
  });
});
