/**
 * The spec's §5.1 (docs/requirements.md) tools through the §5.2 workflow, end to end on any harness transport: undefined →(Knowledge Graph
 * Query)→ analysis →(Complex Analysis Tool)→ results →(Reset Workflow)→ undefined, then a final answer.
 * At every iteration: the tools the model was shown, each MCP tool's arguments, the state carried by `next`,
 * and the responses the client saw.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { offeredToolNames, type PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import { startAgentHarness, type AgentHarness, type AskResult } from '../support/agent-harness.js';
import { loadSpecExample, WORKFLOW_GROUPS } from '../support/spec-tools.js';
import { onTarget, type HarnessTarget } from '../support/harness-per-test.js';

const QUESTION = 'What entities are connected to Company X?';

/** The scripted model: one step of the workflow per iteration, chosen by how much history there is. */
function workflowModel(terms: PromptTerms): string {
  const history = terms.history as unknown[];
  switch (history.length) {
    case 0:
      return `Thought: I should look in the knowledge graph\nAction: Knowledge Graph Query\nArgs: {"question": "${QUESTION}"}`;
    case 1:
      return 'Thought: Now analyse what I found\nAction: Complex Analysis Tool\nArgs: {\n  "dataset": "company-x",\n  "depth": "2"\n}';
    case 2:
      return 'Thought: Done with the results, reset\nAction: Reset Workflow\nArgs: {}';
    default:
      return 'Thought: I have everything\nFinal Answer: Company X is connected to\nAcme Corp and Globex.';
  }
}

export function specWorkflowSuite(target: HarnessTarget): void {
  describe(onTarget('spec §5.2 (docs/requirements.md) workflow with the §5.1 tools', target), () => {
    let harness: AgentHarness;
    let result: AskResult;

    beforeAll(async () => {
      const example = loadSpecExample();
      harness = await startAgentHarness({
        ...target,
        tools: example.tool,
        script: workflowModel,
        graphRag: (query) => `Company X is linked to Acme Corp and Globex (asked: ${query})`,
        mcpTools: {
          'analysis-server': (params) => ({ object: { clusters: 2, input: params } }),
          'workflow-server': () => 'workflow reset',
        },
      });
      result = await harness.ask({ question: QUESTION, group: WORKFLOW_GROUPS, state: 'undefined', streaming: false });
    });
    afterAll(async () => harness?.stop());

    it('loads the four TrustGraph-typed tools and the MCP-typed graph-update', () => {
      const registry = harness.service.registries.get(harness.workspace);
      expect(registry.tools.map((t) => t.name)).toEqual([
        'Complex Analysis Tool',
        'Graph Update',
        'Knowledge Graph Query',
        'Reset Workflow',
        'Text Completion',
      ]);
      expect(registry.problems.filter((p) => p.severity === 'error')).toEqual([]);
    });

    it('shows the model exactly the tools of each state', () => {
      const calls = harness.prompt.reactCalls();
      expect(calls).toHaveLength(4);
      expect(calls.map(offeredToolNames)).toEqual([
        ['Knowledge Graph Query', 'Text Completion'],
        ['Complex Analysis Tool', 'Graph Update', 'Reset Workflow', 'Text Completion'],
        ['Reset Workflow', 'Text Completion'],
        ['Knowledge Graph Query', 'Text Completion'],
      ]);
      expect(calls[1]!.terms.tool_names).toBe('Complex Analysis Tool,Graph Update,Reset Workflow,Text Completion');
    });

    it("shows each MCP tool's declared arguments, and the built-in ones", () => {
      const tools = harness.prompt.reactCalls()[1]!.terms.tools as { name: string; arguments: unknown[] }[];
      const byName = Object.fromEntries(tools.map((t) => [t.name, t.arguments]));
      expect(byName['Complex Analysis Tool']).toEqual([
        { name: 'dataset', type: 'string', description: 'What to analyse', required: true },
        { name: 'depth', type: 'integer', description: 'How many hops to follow (1-5)', required: false },
      ]);
      expect(byName['Graph Update']).toEqual([
        { name: 'entity', type: 'string', description: 'The entity to add or change', required: true },
        { name: 'properties', type: 'object', description: 'Properties to set on the entity', required: true },
      ]);
      expect(byName['Reset Workflow']).toEqual([]);
      expect(byName['Text Completion']).toEqual([
        { name: 'question', type: 'string', description: 'The text prompt or question for completion', required: true },
      ]);
    });

    it('carries the state in every next message: analysis, results, undefined', () => {
      expect(result.nextRequests.map((r) => r.state)).toEqual(['analysis', 'results', 'undefined']);
      expect(result.nextRequests.every((r) => JSON.stringify(r.group) === JSON.stringify(WORKFLOW_GROUPS))).toBe(true);
      expect(result.nextRequests.map((r) => r.history.length)).toEqual([1, 2, 3]);
      const sessions = new Set(result.nextRequests.map((r) => r.session_id));
      expect(sessions.size).toBe(1);
      expect([...sessions][0]).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('calls the tools with validated arguments and records them as strings in history', () => {
      expect(harness.graphRag.calls.map((c) => c.query)).toEqual([QUESTION]);
      expect(harness.mcp.calls.map((c) => [c.name, c.parameters])).toEqual([
        ['analysis-server', { dataset: 'company-x', depth: 2 }],
        ['workflow-server', {}],
      ]);
      const history = result.nextRequests[2]!.history;
      expect(history.map((s) => s.action)).toEqual(['Knowledge Graph Query', 'Complex Analysis Tool', 'Reset Workflow']);
      expect(history[1]!.arguments).toEqual({ dataset: 'company-x', depth: '2' });
      expect(history[1]!.observation).toBe('{"clusters": 2, "input": {"dataset": "company-x", "depth": 2}}');
      expect(history[2]!.observation).toBe('workflow reset');
    });

    it('sends the client the response sequence TrustGraph sends', () => {
      const kinds = result.responses.map((r) => `${r.message_type}${r.end_of_dialog ? '!' : ''}`);
      const toolIteration = ['thought', 'explain', 'observation', 'explain'];
      // The knowledge query's graph RAG trace is handed on before its observation, as TrustGraph's orchestrator does.
      const knowledgeIteration = ['thought', 'explain', 'explain', 'observation', 'explain'];
      expect(kinds).toEqual([
        'explain',
        ...knowledgeIteration,
        ...toolIteration,
        ...toolIteration,
        'thought',
        'explain',
        'answer!',
      ]);
      expect(result.last.content).toBe('Company X is connected to\nAcme Corp and Globex.');
      const session = result.nextRequests[0]!.session_id;
      const observations = result.responses.filter((r) => r.message_type === 'observation');
      expect(observations.map((o) => o.message_id)).toEqual([1, 2, 3].map((n) => `urn:trustgraph:agent:${session}/i${n}/observation`));
      expect(result.last.message_id).toBe(`urn:trustgraph:agent:${session}/final`);
      expect(result.responses.every((r) => r.error === null)).toBe(true);
    });
  });
}
