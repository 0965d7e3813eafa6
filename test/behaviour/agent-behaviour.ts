/**
 * What the agent does with each kind of model decision, with stand-in services on any harness transport (the
 * unit project runs it in memory, the integration project on the real broker): hidden tools, bad arguments,
 * failing tools, the iteration limit, streaming, tool services, malformed model output and requests with no groups.
 */
import { describe, expect, it } from 'vitest';
import { offeredToolNames, type PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import { knowledgeQueryTool, mcpTool } from '../../dev/flow-config.js';
import { harnessPerTest, onTarget, type HarnessTarget } from '../support/harness-per-test.js';

const TOOLS = {
  'a-lookup': knowledgeQueryTool('lookup', 'Look things up', { group: ['read-only'], state: 'analysis' }),
  'b-analyse': mcpTool(
    'analyse',
    'analysis-server',
    [
      { name: 'dataset', type: 'string', description: 'What to analyse' },
      { name: 'depth', type: 'integer', description: 'How deep' },
    ],
    'Analyse a dataset',
    { group: ['advanced'], 'applicable-states': ['analysis'], state: 'results' },
  ),
  'c-admin': mcpTool('wipe', 'wipe-server', [], 'Wipe everything', { group: ['admin'] }),
};

const history = (terms: PromptTerms) => terms.history as { action: string; observation: string }[];

/** A model that makes one move, then answers with what it saw as the last observation. */
function oneMove(move: string) {
  return (terms: PromptTerms) =>
    history(terms).length === 0 ? move : `Thought: ok\nFinal Answer: saw: ${history(terms).at(-1)!.observation}`;
}

export function agentBehaviourSuite(target: HarnessTarget): void {
  describe(onTarget('agent behaviour', target), () => {
    const start = harnessPerTest(target, { tools: TOOLS });

    describe('a tool that was not offered', () => {
      it('becomes an observation listing the offered tools, and the tool is not called', async () => {
        const h = await start({ script: oneMove('Thought: try admin\nAction: wipe\nArgs: {}'), mcpTools: { 'wipe-server': () => 'wiped' } });
        const result = await h.ask({ question: 'q', group: ['read-only'] });
        expect(h.mcp.calls).toHaveLength(0);
        expect(result.nextRequests[0]!.history[0]!.observation).toBe(
          'Error: tool "wipe" is not available in this conversation\'s groups and state. Available tools: lookup.',
        );
        expect(result.nextRequests[0]!.state).toBe('undefined');
        expect(result.last.content).toMatch(/^saw: Error: tool "wipe" is not available/);
      });

      it('ends the dialog with TrustGraph\'s error in strict mode', async () => {
        const h = await start({
          script: oneMove('Thought: try admin\nAction: wipe\nArgs: {}'),
          mcpTools: { 'wipe-server': () => 'wiped' },
          settings: { strictTools: true },
        });
        const result = await h.ask({ question: 'q', group: ['read-only'] });
        expect(h.mcp.calls).toHaveLength(0);
        expect(result.last).toMatchObject({
          message_type: 'error',
          content: 'No action for wipe!',
          end_of_message: true,
          end_of_dialog: true,
          error: { type: 'agent-error', message: 'No action for wipe!' },
        });
        expect(result.nextRequests).toHaveLength(0);
      });
    });

    describe('invalid MCP arguments', () => {
      it('become an observation naming each argument, and the MCP service is not called', async () => {
        const h = await start({
          script: oneMove('Thought: analyse\nAction: analyse\nArgs: {"depth": "deep"}'),
          mcpTools: { 'analysis-server': () => 'analysed' },
        });
        const result = await h.ask({ question: 'q', group: ['advanced'], state: 'analysis' });
        expect(h.mcp.calls).toHaveLength(0);
        const observation = result.nextRequests[0]!.history[0]!.observation;
        expect(observation).toContain('Error: invalid arguments for tool "analyse"');
        expect(observation).toContain('argument "dataset" is required');
        expect(observation).toContain('argument "depth" must be an integer, got "deep"');
        // The state does not move when the tool was not run.
        expect(result.nextRequests[0]!.state).toBe('analysis');
      });
    });

    describe('a failing tool', () => {
      it('gives an Error observation and keeps the state', async () => {
        const h = await start({
          script: oneMove('Thought: analyse\nAction: analyse\nArgs: {"dataset": "x", "depth": 1}'),
          mcpTools: { 'analysis-server': () => ({ error: { type: 'tool-error', message: 'analysis server exploded' } }) },
        });
        const result = await h.ask({ question: 'q', group: ['advanced'], state: 'analysis' });
        expect(h.mcp.calls).toHaveLength(1);
        expect(result.nextRequests[0]!.history[0]!.observation).toBe('Error: mcp-tool error (tool-error): analysis server exploded');
        expect(result.nextRequests[0]!.state).toBe('analysis');
      });

      it('moves the state when the same tool succeeds', async () => {
        const h = await start({
          script: oneMove('Thought: analyse\nAction: analyse\nArgs: {"dataset": "x", "depth": 1}'),
          mcpTools: { 'analysis-server': () => 'fine' },
        });
        const result = await h.ask({ question: 'q', group: ['advanced'], state: 'analysis' });
        expect(result.nextRequests[0]!.state).toBe('results');
      });
    });

    describe('the iteration limit', () => {
      it('ends the dialog with "Too many agent iterations" after --max-iterations tool steps', async () => {
        const h = await start({
          script: () => 'Thought: again\nAction: lookup\nArgs: {"question": "more"}',
          settings: { maxIterations: 3 },
        });
        const result = await h.ask({ question: 'q', group: ['read-only'] });
        expect(h.prompt.reactCalls()).toHaveLength(3);
        expect(result.nextRequests.map((r) => r.history.length)).toEqual([1, 2, 3]);
        expect(result.last).toMatchObject({ message_type: 'error', error: { type: 'agent-error', message: 'Too many agent iterations' } });
      });
    });

    describe('streaming', () => {
      it('streams thought and answer chunks and ends with an empty answer', async () => {
        const h = await start({
          script: (terms) =>
            history(terms).length === 0
              ? ['Thought: I need to ', 'look this up\nAct', 'ion: lookup\nArgs: {"quest', 'ion": "what {is} it"}']
              : ['Thought: got it\nFinal Ans', 'wer: It is\n', 'a thing.'],
          graphRag: () => 'a thing',
        });
        const result = await h.ask({ question: 'q', group: ['read-only'], streaming: true });
        expect(h.graphRag.calls.map((c) => c.query)).toEqual(['what {is} it']);
        expect(h.prompt.reactCalls().every((c) => c.streaming)).toBe(true);
        const thoughts = result.responses.filter((r) => r.message_type === 'thought');
        expect(thoughts.filter((t) => t.message_id.endsWith('/i1/thought')).map((t) => t.content).join('')).toBe('I need to look this up');
        expect(thoughts.filter((t) => t.message_id.endsWith('/i1/thought')).at(-1)!.end_of_message).toBe(true);
        const answers = result.responses.filter((r) => r.message_type === 'answer');
        expect(answers.map((a) => a.content).join('')).toBe('It is\na thing.');
        expect(answers.slice(0, -1).every((a) => !a.end_of_message && !a.end_of_dialog)).toBe(true);
        expect(result.last).toMatchObject({ message_type: 'answer', content: '', end_of_message: true, end_of_dialog: true });
        expect(result.responses.at(-2)!.message_type).toBe('explain');
        expect(result.nextRequests[0]!.streaming).toBe(true);
      });
    });

    describe('a tool-service tool', () => {
      it('calls the service on its own queues with config and arguments, and observes its reply', async () => {
        const h = await start({
          tools: {
            joke: {
              name: 'joke',
              description: 'Tell a joke',
              type: 'tool-service',
              service: 'joke-service',
              style: 'pun',
              arguments: [{ name: 'topic', type: 'string', description: 'What about' }],
            },
          },
          toolServices: {
            'joke-service': {
              configParams: [{ name: 'style', required: true }],
              handler: (args, config) => `a ${String(config.style)} about ${String(args.topic)}`,
            },
          },
          script: oneMove('Thought: joke\nAction: joke\nArgs: {"topic": "pulsar"}'),
        });
        const result = await h.ask({ question: 'q' });
        const service = h.toolServices['joke-service']!;
        expect(service.calls.map((c) => [c.config, c.arguments])).toEqual([[{ style: 'pun' }, { topic: 'pulsar' }]]);
        expect(result.nextRequests[0]!.history[0]!.observation).toBe('a pun about pulsar');
        expect(result.last.content).toBe('saw: a pun about pulsar');
      });
    });

    describe('malformed model output', () => {
      for (const streaming of [false, true]) {
        it(`becomes an observation the model can correct (${streaming ? 'streaming' : 'non-streaming'})`, async () => {
          const h = await start({
            script: (terms) =>
              history(terms).length === 0
                ? 'Thought: call it\nAction: lookup\nArgs: {"question": oops}'
                : `Thought: fix\nFinal Answer: corrected after ${history(terms)[0]!.action}`,
          });
          const result = await h.ask({ question: 'q', group: ['read-only'], streaming });
          const step = result.nextRequests[0]!.history[0]!;
          expect(step.action).toBe('__parse_error__');
          expect(step.observation).toMatch(/^Error: LLM parse error: Invalid JSON in Args: /);
          expect(h.graphRag.calls).toHaveLength(0);
          expect(result.answer).toBe('corrected after __parse_error__');
          expect(result.last.end_of_dialog).toBe(true);
        });
      }

      it('treats a reply with no Thought/Action/Final Answer as a parse error too', async () => {
        const h = await start({
          script: (terms) => (history(terms).length === 0 ? 'I refuse to follow the format.' : 'Thought: ok\nFinal Answer: fine'),
        });
        const result = await h.ask({ question: 'q' });
        expect(result.nextRequests[0]!.history[0]!.observation).toMatch(/^Error: LLM parse error: Could not parse response/);
        expect(result.answer).toBe('fine');
      });
    });

    describe('group: []', () => {
      it('offers no tools, and the model can still answer', async () => {
        const h = await start({ script: () => 'Thought: nothing to use\nFinal Answer: from my own knowledge' });
        const result = await h.ask({ question: 'q', group: [] });
        const call = h.prompt.lastReact();
        expect(offeredToolNames(call)).toEqual([]);
        expect(call.terms.tool_names).toBe('');
        expect(result.answer).toBe('from my own knowledge');
      });
    });
  });
}
