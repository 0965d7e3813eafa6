// TG-12 (docs/requirements.md): the tool-group spec's five tools (§5.1) through its workflow (§5.2), with docs/trustgraph-agent-notes.md §5.1's
// corrections: `graph-update` is not a TrustGraph type (an mcp-tool stands in), `mcp_tool_id` is
// `mcp-tool`, and in the analysis phase reset-workflow (group admin only) is NOT offered.
import { describe, expect, it } from 'vitest';
import { registryOf } from '../../support/registry-fixtures.js';

function specTools(statesKey: 'available_in_states' | 'applicable-states') {
  return {
    'knowledge-query': {
      type: 'knowledge-query',
      name: 'Knowledge Graph Query',
      description: 'Query the knowledge graph for entities and relationships',
      group: ['read-only', 'knowledge', 'basic'],
      state: 'analysis',
      [statesKey]: ['undefined', 'research'],
    },
    'graph-update': {
      type: 'mcp-tool', // the spec's "graph-update" type does not exist in TrustGraph
      'mcp-tool': 'graph-update',
      name: 'Graph Update',
      description: 'Add or modify entities in the knowledge graph',
      group: ['write', 'knowledge', 'admin'],
      [statesKey]: ['analysis', 'modification'],
    },
    'text-completion': {
      type: 'text-completion',
      name: 'Text Completion',
      description: 'Generate text using language models',
      group: ['read-only', 'text', 'basic'],
      state: 'undefined',
    },
    'complex-analysis': {
      type: 'mcp-tool',
      name: 'Complex Analysis Tool',
      description: 'Perform complex data analysis',
      group: ['advanced', 'compute', 'expensive'],
      state: 'results',
      [statesKey]: ['analysis'],
      'mcp-tool': 'analysis-server',
    },
    'reset-workflow': {
      type: 'mcp-tool',
      'mcp-tool': 'reset-workflow',
      name: 'Reset Workflow',
      description: 'Reset to initial state',
      group: ['admin'],
      state: 'undefined',
      [statesKey]: ['analysis', 'results'],
    },
  };
}

describe.each(['available_in_states', 'applicable-states'] as const)('spec §5.1 (docs/requirements.md) tools, states under "%s"', (statesKey) => {
  const { registry, problems } = registryOf(specTools(statesKey));

  it('loads all five tools without problems', () => {
    expect(problems).toEqual([]);
    // Config-key order: complex-analysis, graph-update, knowledge-query, reset-workflow, text-completion.
    expect(registry.tools.map((tool) => tool.name)).toEqual([
      'Complex Analysis Tool',
      'Graph Update',
      'Knowledge Graph Query',
      'Reset Workflow',
      'Text Completion',
    ]);
  });

  it('runs the spec §5.2 (docs/requirements.md) workflow: undefined → analysis → results → undefined', () => {
    // 1. Initial research request.
    const start = registry.filter(['read-only', 'knowledge'], 'undefined');
    expect(start.names).toEqual(['Knowledge Graph Query', 'Text Completion']);
    expect(start.filteredByGroup).toEqual(['Complex Analysis Tool', 'Reset Workflow']);
    expect(start.filteredByState).toEqual(['Graph Update']);
    const afterQuery = registry.nextState(start.get('Knowledge Graph Query')!, start.state);
    expect(afterQuery).toBe('analysis');

    // 2. Analysis phase.
    const analysis = registry.filter(['advanced', 'compute', 'write'], afterQuery);
    expect(analysis.names).toEqual(['Complex Analysis Tool', 'Graph Update']);
    expect(analysis.has('Reset Workflow')).toBe(false); // the spec's text says otherwise; its formula does not
    expect(analysis.filteredByGroup).toEqual(['Knowledge Graph Query', 'Reset Workflow', 'Text Completion']);
    expect(analysis.filteredByState).toEqual([]);
    const afterAnalysis = registry.nextState(analysis.get('Complex Analysis Tool')!, analysis.state);
    expect(afterAnalysis).toBe('results');

    // 3. Results phase.
    const results = registry.filter(['admin'], afterAnalysis);
    expect(results.names).toEqual(['Reset Workflow']);
    expect(results.filteredByState).toEqual(['Graph Update']);
    const afterReset = registry.nextState(results.get('Reset Workflow')!, results.state);
    expect(afterReset).toBe('undefined');

    // 4. Back at the start: the initial tools are available again (the very same cached set).
    const again = registry.filter(['knowledge', 'read-only'], afterReset);
    expect(again.names).toEqual(['Knowledge Graph Query', 'Text Completion']);
    expect(again).toBe(start);
  });

  it('Graph Update becomes available in the analysis state to a knowledge request', () => {
    expect(registry.filter(['knowledge'], 'analysis').names).toEqual(['Graph Update']);
    expect(registry.filter(['knowledge'], 'modification').names).toEqual(['Graph Update']);
  });

  it('Text Completion (no states listed) is offered in every state of the workflow', () => {
    for (const state of ['undefined', 'analysis', 'results', 'research']) {
      expect(registry.filter(['text'], state).names).toEqual(['Text Completion']);
    }
  });
});
