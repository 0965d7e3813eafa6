import { describe, expect, it } from 'vitest';
import { checkPlan } from '../../../../src/agent/patterns/plan-then-execute.js';
import { plannableTools } from '../../../../src/agent/orchestrator/plannable-tools.js';
import { buildRegistry } from '../../../../src/tools/registry/registry.js';
import { askOf } from '../../../../src/groups/selection.js';
import { makeAgentRequest } from '../../../../src/wire/index.js';

const tool = (name: string, extra: Record<string, unknown>) => JSON.stringify({ type: 'knowledge-query', name, description: `${name} tool`, ...extra });
const { registry } = buildRegistry({
  workspace: 'w',
  version: 1,
  tools: {
    find: tool('find', { group: ['r'], state: 'analysis' }),
    analyse: tool('analyse', { group: ['r'], 'applicable-states': ['analysis'], state: 'results' }),
    report: tool('report', { group: ['r'], 'applicable-states': ['results'] }),
    island: tool('island', { group: ['r'], 'applicable-states': ['nowhere'] }),
    admin: tool('admin', { group: ['admin'] }),
  },
});

describe('the tools plan-create is shown', () => {
  it('are those of every state the plan can reach, each saying which state it needs', () => {
    const shown = plannableTools(registry, askOf(makeAgentRequest({ question: 'q', group: ['r'] })));
    expect(shown).toEqual([
      { name: 'find', description: 'find tool' },
      { name: 'analyse', description: 'analyse tool (only once an earlier step has moved the state to "analysis")' },
      { name: 'report', description: 'report tool (only once an earlier step has moved the state to "results")' },
    ]);
  });

  it('are exactly the tools the plan check accepts in some order', () => {
    const request = askOf(makeAgentRequest({ question: 'q', group: ['r'] }));
    const names = plannableTools(registry, request).map((t) => t.name);
    expect(checkPlan(registry, request, names.map((tool_hint) => ({ tool_hint })))).toBeUndefined();
    for (const other of ['island', 'admin']) {
      expect(names).not.toContain(other);
      expect(checkPlan(registry, request, [...names, other].map((tool_hint) => ({ tool_hint })))).toMatchObject({ tool: other });
    }
  });
});
