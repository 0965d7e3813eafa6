import { describe, expect, it } from 'vitest';
import { buildRegistry } from '../../../src/tools/registry/registry.js';
import { mcpGroupsOf } from '../../../src/tools/config/mcp-groups.js';

const queues = { 'request-queue': 'non-persistent://tg/request/x', 'response-queue': 'non-persistent://tg/response/x' };

describe('groups inherited from tool-service and mcp entries', () => {
  it('reads the group of each mcp entry that has a valid one, and leaves the rest out', () => {
    const groups = mcpGroupsOf({
      a: JSON.stringify({ url: 'http://h/mcp', group: ['research', 'research', 'ops'] }),
      b: JSON.stringify({ url: 'http://h/mcp' }),
      c: JSON.stringify({ url: 'http://h/mcp', group: 'research' }),
      d: '{not json',
    });
    expect([...groups]).toEqual([['a', ['research', 'ops']]]);
  });

  it('applies them in the registry, and a tool-service whose group is not a list is a problem naming the fix', () => {
    const { registry, problems } = buildRegistry({
      workspace: 'w',
      version: 1,
      toolServices: { svc: JSON.stringify({ ...queues, group: ['ops'] }), bad: JSON.stringify({ ...queues, group: 'ops' }) },
      mcpServers: { m: JSON.stringify({ url: 'http://h/mcp', group: ['research'] }) },
      tools: {
        t1: JSON.stringify({ type: 'tool-service', name: 'svc tool', service: 'svc' }),
        t2: JSON.stringify({ type: 'mcp-tool', name: 'mcp tool', 'mcp-tool': 'm' }),
        t3: JSON.stringify({ type: 'mcp-tool', name: 'other mcp tool', 'mcp-tool': 'elsewhere' }),
        t4: JSON.stringify({ type: 'knowledge-query', name: 'kq' }),
      },
    });
    expect(Object.fromEntries(registry.tools.map((t) => [t.name, t.groups]))).toEqual({
      'svc tool': ['ops'],
      'mcp tool': ['research'],
      'other mcp tool': ['default'],
      kq: ['default'],
    });
    expect(problems.map((p) => `${p.key} ${p.field}: ${p.message}`)).toEqual([expect.stringMatching(/^bad group: expected a list of group names, got a string; write \["ops"\]/)]);
  });
});
