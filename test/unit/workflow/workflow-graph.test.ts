import { describe, expect, it } from 'vitest';
import { workflowGraph } from '../../../src/workflow/workflow-graph.js';
import { toDot, toMermaid, toSvg } from '../../../src/workflow/workflow-text.js';
import { specRegistry } from '../../support/spec-tools.js';
import { registryOf } from '../../support/registry-fixtures.js';

const registry = specRegistry();

describe("the workflow graph of the spec's §5.1 tools", () => {
  it('has its states, the tools available in each, and its transitions', () => {
    const graph = workflowGraph(registry, undefined);
    expect(graph.states.map((s) => [s.name, s.initial, s.tools])).toEqual([
      ['analysis', false, ['Complex Analysis Tool', 'Graph Update', 'Reset Workflow']],
      ['modification', false, ['Graph Update']],
      ['research', false, ['Knowledge Graph Query']],
      ['results', false, ['Reset Workflow']],
      ['undefined', true, ['Knowledge Graph Query']],
    ]);
    expect(graph.anyState).toEqual(['Text Completion']);
    expect(graph.transitions.map((t) => `${t.from} -[${t.tool}]-> ${t.to}`)).toEqual([
      'analysis -[Complex Analysis Tool]-> results',
      'research -[Knowledge Graph Query]-> analysis',
      'undefined -[Knowledge Graph Query]-> analysis',
      'analysis -[Reset Workflow]-> undefined',
      'results -[Reset Workflow]-> undefined',
      '* -[Text Completion]-> undefined',
    ]);
  });

  it('marks what a request is offered, by the registry filter', () => {
    const graph = workflowGraph(registry, undefined, { groups: ['read-only'], state: 'undefined' });
    expect(graph.request).toEqual({ groups: ['read-only'], state: 'undefined', offered: ['Knowledge Graph Query', 'Text Completion'] });
    const dot = toDot(graph);
    expect(dot).toContain('"undefined" [label=<<b>undefined</b><br/><font point-size="10" color="#1a7f37">Knowledge Graph Query</font>>, peripheries=2, penwidth=3');
    expect(dot).toContain('"analysis" -> "results" [label="Complex Analysis Tool\\n[advanced, compute, expensive]", color="#8c959f"');
  });

  it('renders as Mermaid and as SVG', async () => {
    const mermaid = toMermaid(workflowGraph(registry, undefined));
    expect(mermaid.split('\n')[0]).toBe('flowchart LR');
    expect(mermaid).toContain('s0["analysis<br/>· Complex Analysis Tool<br/>· Graph Update<br/>· Reset Workflow"]');
    expect(mermaid).toContain('s0 -- "Complex Analysis Tool [advanced, compute, expensive]" --> s3');
    const svg = await toSvg(workflowGraph(registry, undefined));
    expect(svg).toMatch(/<svg [^>]*>/);
    for (const text of ['analysis', 'results', 'modification', 'Complex Analysis Tool', 'any state']) expect(svg).toContain(`>${text}</text>`);
  });
  it('keeps config names inside their Mermaid labels: no line, directive or markup of their own', () => {
    const hostile = 'done\n%%{init: {"theme": "dark", "securityLevel": "loose"}}%%\nclick s0 call alert()';
    const { registry: tricky } = registryOf({
      a: { type: 'text-completion', name: 'Finish <img src=x onerror=alert(1)>', group: ['g`#'], 'applicable-states': ['undefined'], state: hostile },
      b: { type: 'text-completion', name: 'Reset\r\n%% comment', 'applicable-states': [hostile], state: 'undefined' },
    });
    const mermaid = toMermaid(workflowGraph(tricky, undefined));
    const lines = mermaid.trimEnd().split('\n');
    // flowchart LR, two states, two transitions: nothing more.
    expect(lines).toHaveLength(5);
    expect(lines.every((line, i) => i === 0 || /^ {2}s\d/.test(line))).toBe(true);
    expect(mermaid).not.toMatch(/%|<img|`/);
    expect(mermaid).toContain('s0["done#10;#37;#37;{init: {#34;theme#34;: #34;dark#34;, #34;securityLevel#34;: #34;loose#34;}}#37;#37;#10;click s0 call alert()<br/>· Reset#13;#10;#37;#37; comment"]');
    expect(mermaid).toContain('s1 -- "Finish #60;img src=x onerror=alert(1)#62; [g#96;#35;]" --> s0');
  });
});
