// TG-8, TG-15, TG-18 (config loading; docs/requirements.md), design decisions 2 and 5 (docs/design.md): every entry is judged on its own,
// invalid ones are left out with a problem that says where and what, and building never throws.
import { InvalidUseError } from '../../../src/errors/index.js';
import { describe, expect, it } from 'vitest';
import { buildRegistry } from '../../../src/tools/registry/registry.js';
import { json, registryOf, textTool } from '../../support/registry-fixtures.js';

const errorsOf = (problems: readonly { severity: string; text: string }[]) =>
  problems.filter((problem) => problem.severity === 'error').map((problem) => problem.text);

describe('state key and its alias', () => {
  it('reads applicable-states (TrustGraph\'s key)', () => {
    const { registry } = registryOf({ a: textTool('t', { 'applicable-states': ['analysis'] }) });
    expect(registry.filter(null, 'analysis').names).toEqual(['t']);
    expect(registry.filter(null, 'undefined').names).toEqual([]);
  });

  it('reads available_in_states (the spec\'s key) as an alias', () => {
    const { registry, problems } = registryOf({ a: textTool('t', { available_in_states: ['analysis'] }) });
    expect(problems).toEqual([]);
    expect(registry.filter(null, 'analysis').names).toEqual(['t']);
    expect(registry.filter(null, 'undefined').names).toEqual([]);
  });

  it('accepts both keys when they list the same states (in any order)', () => {
    const { registry, problems } = registryOf({
      a: textTool('t', { 'applicable-states': ['a', 'b'], available_in_states: ['b', 'a'] }),
    });
    expect(problems).toEqual([]);
    expect(registry.filter(null, 'b').names).toEqual(['t']);
  });

  it('rejects a tool whose two keys disagree, and loads the others', () => {
    const { registry, problems } = registryOf({
      a: textTool('conflicted', { 'applicable-states': ['a'], available_in_states: ['b'] }),
      b: textTool('fine'),
    });
    expect(registry.tools.map((tool) => tool.name)).toEqual(['fine']);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ key: 'a', name: 'conflicted', field: 'available_in_states', severity: 'error' });
    expect(problems[0]!.message).toContain('conflicts with "applicable-states"');
  });
});

describe('invalid entries are left out, the rest load', () => {
  it('a tool of unknown type next to valid ones', () => {
    const { registry, problems } = registryOf({
      a: textTool('before'),
      b: { type: 'graph-update', name: 'Graph Update' },
      c: textTool('after'),
    });
    expect(registry.tools.map((tool) => tool.name)).toEqual(['before', 'after']);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.text).toBe(
      'workspace "default", tool key "b" (name "Graph Update"): field "type": unknown tool type "graph-update"; ' +
        'expected one of knowledge-query, text-completion, mcp-tool, prompt, structured-query, row-embeddings-query, tool-service',
    );
  });

  it('invalid JSON', () => {
    const { registry, problems } = registryOf({ a: '{"type": "text-completion", "name": ', b: textTool('ok') });
    expect(registry.tools.map((tool) => tool.name)).toEqual(['ok']);
    expect(problems[0]).toMatchObject({ key: 'a', severity: 'error' });
    expect(problems[0]!.name).toBeUndefined();
    expect(problems[0]!.message).toMatch(/^invalid JSON: /);
  });

  it('JSON that is not an object', () => {
    const { problems } = registryOf({ a: '[1, 2]', b: '"text"', c: 'null' });
    expect(problems.map((problem) => problem.message)).toEqual([
      'expected a JSON object, got a list',
      'expected a JSON object, got a string ("text")',
      'expected a JSON object, got null',
    ]);
  });

  it('missing or null type (what tg-set-tool writes without --type)', () => {
    const { problems } = registryOf({ a: { name: 'x' }, b: { name: 'y', type: null } });
    expect(problems.map((problem) => [problem.key, problem.field, problem.message.split(';')[0]])).toEqual([
      ['a', 'type', 'required: one of knowledge-query, text-completion, mcp-tool, prompt, structured-query, row-embeddings-query, tool-service'],
      ['b', 'type', 'expected one of knowledge-query, text-completion, mcp-tool, prompt, structured-query, row-embeddings-query, tool-service, got null'],
    ]);
  });

  it('names the workspace, key, tool name and field path', () => {
    const { problems } = registryOf({ kq: { type: 'knowledge-query', name: 'knowledge_query', 'applicable-states': 'analysis' } });
    expect(problems[0]!.text).toBe(
      'workspace "default", tool key "kq" (name "knowledge_query"): field "applicable-states": ' +
        'expected a list of state names, got a string; write ["analysis"]',
    );
  });

  it('rejects a bare-string group with a hint', () => {
    const { registry, problems } = registryOf({ a: textTool('t', { group: 'finance' }) });
    expect(registry.tools).toEqual([]);
    expect(problems[0]).toMatchObject({ field: 'group', message: 'expected a list of group names, got a string; write ["finance"]' });
  });

  it('rejects non-string group and state entries, naming the element', () => {
    const { problems } = registryOf({
      a: textTool('t', { group: ['ok', 7] }),
      b: textTool('u', { state: 3 }),
      c: textTool('v', { 'applicable-states': [null] }),
    });
    expect(problems.map((problem) => [problem.key, problem.field, problem.message])).toEqual([
      ['a', 'group[1]', 'expected a string, got a number (7)'],
      ['b', 'state', 'expected a string, got a number (3)'],
      ['c', 'applicable-states[0]', 'expected a string, got null'],
    ]);
  });

  it('requires a non-empty name (stricter than TrustGraph)', () => {
    const { registry, problems } = registryOf({
      a: { type: 'text-completion' },
      b: { type: 'text-completion', name: '  ' },
      c: { type: 'text-completion', name: 5 },
    });
    expect(registry.tools).toEqual([]);
    expect(problems.map((problem) => [problem.key, problem.field])).toEqual([
      ['a', 'name'],
      ['b', 'name'],
      ['c', 'name'],
    ]);
    expect(problems[0]!.message).toMatch(/^required/);
    expect(problems[1]!.message).toBe('expected a non-empty string');
  });

  it('requires the reference each type cannot work without', () => {
    const { problems } = registryOf({
      a: { type: 'mcp-tool', name: 'm', mcp_tool_id: 'srv' },
      b: { type: 'prompt', name: 'p' },
      c: { type: 'row-embeddings-query', name: 'r' },
    });
    expect(problems.map((problem) => [problem.key, problem.field])).toEqual([
      ['a', 'mcp-tool'],
      ['b', 'template'],
      ['c', 'schema-name'],
    ]);
    expect(problems[0]!.message).toContain('"mcp_tool_id"');
  });

  it('reports every issue of one tool, each with its own field', () => {
    const { problems } = registryOf({ a: { type: 'prompt', name: 'p', group: 'x', arguments: [{ name: 'n', type: 'int' }] } });
    expect(problems.map((problem) => problem.field)).toEqual(['group', 'template', 'arguments[0].type']);
  });

  it('rejects bad limits on row-embeddings-query', () => {
    const bad = [0, -1, 2.5, 'ten', ''];
    const { problems } = registryOf(
      Object.fromEntries(bad.map((limit, i) => [`k${i}`, { type: 'row-embeddings-query', name: `r${i}`, 'schema-name': 's', limit }])),
    );
    expect(problems.map((problem) => problem.field)).toEqual(bad.map(() => 'limit'));
  });

  it('rejects malformed argument declarations and duplicate argument names', () => {
    const { problems } = registryOf({
      a: { type: 'mcp-tool', name: 'm', 'mcp-tool': 'srv', arguments: [{ type: 'string' }] },
      b: { type: 'mcp-tool', name: 'n', 'mcp-tool': 'srv', arguments: 'account_id' },
      c: {
        type: 'mcp-tool',
        name: 'o',
        'mcp-tool': 'srv',
        arguments: [
          { name: 'x', type: 'string' },
          { name: 'x', type: 'number' },
        ],
      },
    });
    expect(problems.map((problem) => [problem.key, problem.field])).toEqual([
      ['a', 'arguments[0].name'],
      ['b', 'arguments'],
      ['c', 'arguments[1].name'],
    ]);
    expect(problems[2]!.message).toBe('duplicate argument name "x" (also arguments[0])');
  });
});

describe('tolerance', () => {
  it('keeps unknown keys and accepts null for optional keys (meaning absent)', () => {
    const { registry, problems } = registryOf({
      a: {
        type: 'knowledge-query',
        name: 'kq',
        description: null,
        group: null,
        state: null,
        'applicable-states': null,
        collection: null,
        future_field: { nested: true },
      },
    });
    expect(problems).toEqual([]);
    const tool = registry.tools[0]!;
    expect(tool).toMatchObject({ groups: ['default'], states: 'all', nextState: undefined, description: null });
    expect(tool.type === 'knowledge-query' && tool.collection).toBe('default');
    expect(tool.config.future_field).toEqual({ nested: true });
  });

  it('applies type defaults: collection "default", limit 10, limit from text', () => {
    const { registry } = registryOf({
      a: { type: 'row-embeddings-query', name: 'r1', 'schema-name': 'customers' },
      b: { type: 'row-embeddings-query', name: 'r2', 'schema-name': 'customers', limit: '20', collection: 'sales', 'index-name': 'full_name' },
      c: { type: 'structured-query', name: 's', collection: 'sales' },
    });
    const [r1, r2, s] = registry.tools;
    expect(r1).toMatchObject({ type: 'row-embeddings-query', schemaName: 'customers', collection: 'default', limit: 10, indexName: undefined });
    expect(r2).toMatchObject({ collection: 'sales', limit: 20, indexName: 'full_name' });
    expect(s).toMatchObject({ type: 'structured-query', collection: 'sales' });
  });

  it('warns (and keeps the tool) when a fixed-argument type carries arguments', () => {
    const { registry, problems } = registryOf({
      a: { type: 'knowledge-query', name: 'kq', arguments: [{ name: 'x', type: 'string' }] },
    });
    expect(registry.tools).toHaveLength(1);
    expect(registry.tools[0]!.arguments.map((a) => a.name)).toEqual(['question']);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ severity: 'warning', field: 'arguments' });
  });

  it('deduplicates a tool\'s groups', () => {
    const { registry } = registryOf({ a: textTool('t', { group: ['a', 'b', 'a'] }) });
    expect(registry.tools[0]!.groups).toEqual(['a', 'b']);
  });

  it('never throws on garbage', () => {
    const garbage: unknown[] = [
      { x: 'not json' },
      { x: 42, y: null, z: true, w: [], v: {} },
      null,
      undefined,
      42,
      'tool',
      [json(textTool('a'))],
      { '': '', __proto__x: '{}', constructor: '{"type":"prompt"}' },
      { a: json({ type: 'tool-service', name: 'ts', service: { nested: 1 } }) },
    ];
    for (const tools of garbage) {
      for (const toolServices of garbage) {
        expect(() =>
          buildRegistry({ workspace: 'default', version: 1, tools: tools as never, toolServices: toolServices as never }),
        ).not.toThrow();
      }
    }
    const { registry, problems } = buildRegistry({ workspace: 'w', version: 2, tools: { x: 'not json' } as never });
    expect(registry.tools).toEqual([]);
    expect(errorsOf(problems)).toHaveLength(1);
  });

  it('reports a whole config type that is not a key → value map', () => {
    const { problems } = buildRegistry({ workspace: 'w', version: 1, tools: 42 as never, toolServices: [] as never });
    expect(problems.map((problem) => [problem.kind, problem.key, problem.message])).toEqual([
      ['tool-service', '', 'config type "tool-service" must map config keys to JSON strings, got a list'],
      ['tool', '', 'config type "tool" must map config keys to JSON strings, got a number (42)'],
    ]);
  });

  it('a "__proto__" config key or argument name stays an ordinary key', () => {
    const tools = JSON.parse('{"__proto__": "{\\"type\\": \\"text-completion\\", \\"name\\": \\"p\\"}"}') as Record<string, string>;
    const { registry } = buildRegistry({ workspace: 'w', version: 1, tools });
    expect(registry.tools.map((tool) => tool.key)).toEqual(['__proto__']);
  });
});

describe('duplicate names', () => {
  it('the tool with the greatest config key wins, and a problem names both keys', () => {
    const { registry, problems } = registryOf({
      b: textTool('same', { description: 'from b' }),
      a: textTool('same', { description: 'from a' }),
      c: textTool('other'),
    });
    expect(registry.tools.map((tool) => [tool.key, tool.name])).toEqual([
      ['b', 'same'],
      ['c', 'other'],
    ]);
    expect(registry.get('same')?.description).toBe('from b');
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ key: 'a', name: 'same', field: 'name', severity: 'error' });
    expect(problems[0]!.message).toContain('"b"');
  });

  it('is deterministic whatever the insertion order of the config map', () => {
    const first = registryOf({ x: textTool('dup', { description: '1' }), y: textTool('dup', { description: '2' }) });
    const second = registryOf({ y: textTool('dup', { description: '2' }), x: textTool('dup', { description: '1' }) });
    expect(first.registry.get('dup')?.key).toBe('y');
    expect(second.registry.get('dup')?.key).toBe('y');
  });
});

describe('registry identity', () => {
  it('carries workspace and version', () => {
    const { registry } = buildRegistry({ workspace: 'acme', version: 42, tools: {} });
    expect(registry.workspace).toBe('acme');
    expect(registry.version).toBe(42);
    expect(registry.tools).toEqual([]);
    expect(registry.filter(null, null).names).toEqual([]);
  });

  it('is deeply frozen', () => {
    const { registry } = registryOf({ a: textTool('t', { group: ['g'], 'applicable-states': ['s'] }) });
    const tool = registry.tools[0]!;
    expect(Object.isFrozen(registry)).toBe(true);
    expect(Object.isFrozen(registry.tools)).toBe(true);
    expect(Object.isFrozen(tool)).toBe(true);
    expect(Object.isFrozen(tool.groups)).toBe(true);
    expect(Object.isFrozen(tool.config)).toBe(true);
    expect(Object.isFrozen(tool.config.group)).toBe(true);
    expect(() => (tool.states as Set<string>).add('x')).toThrow(InvalidUseError);
    expect(() => (registry.knownGroups as Set<string>).add('x')).toThrow(InvalidUseError);
    expect(() => (registry.toolServices as Map<string, never>).clear()).toThrow(InvalidUseError);
    expect(Object.isFrozen(registry.problems)).toBe(true);
  });
});
