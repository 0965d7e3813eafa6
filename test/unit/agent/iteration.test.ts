/**
 * One ReAct iteration (reactIteration) with a fake model and fake tool clients: no bus. Each test scripts the
 * model's text and the services' replies, and checks the responses, the `next` request, the result and the
 * events the iteration reports.
 */
import { describe, expect, it } from 'vitest';
import { makeAgentStep, makePromptResponse, makeToolResponse } from '../../../src/wire/index.js';
import { act, answer, graphAnswer, iterate, type Model } from '../../support/iteration-run.js';

describe('ReAct: a final answer', () => {
  it('answers with the session explain, the thought, the conclusion explain and the answer, and ends the session', async () => {
    const run = await iterate({ model: answer('forty-two') }, { question: 'q', session_id: 's-1' });
    expect(run.kinds).toEqual(['explain', 'thought', 'explain', 'answer!']);
    expect(run.responses[1]).toMatchObject({ content: 'I know', end_of_message: true, message_id: 'urn:trustgraph:agent:s-1/i1/thought' });
    expect(run.responses.at(-1)).toMatchObject({ content: 'forty-two', end_of_message: true, message_id: 'urn:trustgraph:agent:s-1/final' });
    expect(run.next).toEqual([]);
    expect(run.explained).toHaveLength(2);
    expect(run.result).toMatchObject({ outcome: 'answer', stateBefore: 'undefined', stateAfter: 'undefined' });
    expect(run.named('sessionEnded')).toEqual([['completed', 1]]);
    expect(run.named('llmFinished')).toHaveLength(1);
  });

  it('offers the model only the tools of the request\'s groups and state', async () => {
    const run = await iterate({ model: answer('x') }, { question: 'q', group: ['advanced'], state: 'analysis' });
    // Prompt terms travel JSON-encoded.
    expect(JSON.parse(run.prompt.calls[0]!.terms.tool_names!)).toBe('analyse');
    expect(run.prompt.calls[0]!.id).toBe('agent-react');
    expect(run.result.toolSet?.names).toEqual(['analyse']);
  });

  it('streams the thought and the answer in chunks, and ends with an empty answer', async () => {
    const model: Model = () => ['Thought: one ', 'two\nFinal Ans', 'wer: the ', 'end'];
    const run = await iterate({ model }, { question: 'q', streaming: true });
    const thoughts = run.responses.filter((r) => r.message_type === 'thought');
    expect(thoughts.map((t) => t.content).join('')).toBe('one two');
    expect(thoughts.at(-1)!.end_of_message).toBe(true);
    const answers = run.responses.filter((r) => r.message_type === 'answer');
    expect(answers.map((a) => a.content).join('')).toBe('the end');
    expect(answers.at(-1)).toMatchObject({ content: '', end_of_message: true, end_of_dialog: true });
    expect(answers.slice(0, -1).every((a) => !a.end_of_dialog)).toBe(true);
    expect(run.prompt.calls[0]!.streaming).toBe(true);
  });

  it('names a very long session by a digest in message ids, and keeps the full id for the next request', async () => {
    const long = 'x'.repeat(5_000);
    const run = await iterate({ model: act('lookup', '{"question": "q"}'), graphRag: graphAnswer('a') }, { question: 'q', session_id: long, group: ['read-only'] });
    expect(run.responses.every((r) => r.message_id.length < 200)).toBe(true);
    expect(run.responses.find((r) => r.message_type === 'observation')!.message_id).toMatch(/^urn:trustgraph:agent:sha256-[0-9a-f]{64}\/i1\/observation$/);
    expect(run.next[0]!.session_id).toBe(long);
  });
});

describe('ReAct: a tool call', () => {
  it('runs the tool, observes its reply, moves the state and publishes the next request', async () => {
    const run = await iterate(
      { model: act('lookup', '{"question": "who?"}'), graphRag: graphAnswer('  Acme  ') },
      { question: 'q', group: ['read-only'], collection: 'c', session_id: 's' },
    );
    expect(run.graphRag!.calls.map((c) => c.query)).toEqual(['who?']);
    expect(run.kinds).toEqual(['explain', 'thought', 'explain', 'observation', 'explain']);
    expect(run.responses[3]!.content).toBe('Acme');
    expect(run.next).toHaveLength(1);
    expect(run.next[0]).toMatchObject({ question: 'q', state: 'analysis', group: ['read-only'], collection: 'c', session_id: 's' });
    expect(run.next[0]!.history).toEqual([
      makeAgentStep({ thought: 'use it', action: 'lookup', arguments: { question: 'who?' }, observation: 'Acme' }),
    ]);
    expect(run.result).toMatchObject({ outcome: 'next', action: 'lookup', stateBefore: 'undefined', stateAfter: 'analysis' });
    expect(run.named('stateTransition').map(([tool, from, to]) => [(tool as { name: string }).name, from, to])).toEqual([['lookup', 'undefined', 'analysis']]);
    expect(run.named('toolFinished').map(([tool, , error]) => [(tool as { name: string }).name, error])).toEqual([['lookup', undefined]]);
    expect(run.named('sessionEnded')).toEqual([]);
  });

  it('writes history arguments as Python str() values', async () => {
    const run = await iterate(
      { model: act('analyse', '{"dataset": "d", "depth": 2}'), mcp: () => makeToolResponse({ text: 'done' }) },
      { question: 'q', group: ['advanced'], state: 'analysis' },
    );
    expect(JSON.parse(run.mcpTool!.calls[0]!.parameters)).toEqual({ dataset: 'd', depth: 2 });
    expect(run.next[0]!.history[0]!.arguments).toEqual({ dataset: 'd', depth: '2' });
    expect(run.next[0]!.state).toBe('results');
  });

  it('keeps the state and observes the error when the tool fails', async () => {
    const run = await iterate(
      {
        model: act('analyse', '{"dataset": "d"}'),
        mcp: () => makeToolResponse({ error: { type: 'tool-error', message: 'exploded' } }),
      },
      { question: 'q', group: ['advanced'], state: 'analysis' },
    );
    expect(run.next[0]!.history[0]!.observation).toBe('Error: mcp-tool error (tool-error): exploded');
    expect(run.next[0]!.state).toBe('analysis');
    expect(run.named('toolFinished').map(([, , error]) => error)).toEqual(['mcp-tool error (tool-error): exploded']);
    expect(run.named('stateTransition')).toEqual([]);
  });

  it('observes a missing service client as the queues the flow lacks', async () => {
    const run = await iterate({ model: act('lookup', '{"question": "q"}') }, { question: 'q', group: ['read-only'] });
    expect(run.next[0]!.history[0]!.observation).toMatch(/^Error: this flow has no graph-rag-request\/graph-rag-response queues/);
  });
});

describe('ReAct: what the model may not do', () => {
  it('observes a tool that was not offered, listing the offered ones, and does not call it', async () => {
    const run = await iterate({ model: act('wipe', '{}'), mcp: () => makeToolResponse({ text: 'wiped' }) }, { question: 'q', group: ['read-only'] });
    expect(run.mcpTool!.calls).toEqual([]);
    expect(run.next[0]!.history[0]!.observation).toBe(
      'Error: tool "wipe" is not available in this conversation\'s groups and state. Available tools: lookup.',
    );
    expect(run.named('actionDenied').map(([name, , known]) => [name, known])).toEqual([['wipe', true]]);
  });

  it('says so when no tools at all are offered', async () => {
    const run = await iterate({ model: act('made-up', '{}') }, { question: 'q', group: [] });
    expect(run.next[0]!.history[0]!.observation).toMatch(/no tools are available in this conversation's groups and state/);
    expect(run.named('actionDenied').map(([name, , known]) => [name, known])).toEqual([['made-up', false]]);
  });

  it('ends the dialog with TrustGraph\'s error in strict mode', async () => {
    const run = await iterate({ model: act('wipe', '{}'), settings: { strictTools: true } }, { question: 'q', group: ['read-only'] });
    expect(run.responses.at(-1)).toMatchObject({ message_type: 'error', end_of_dialog: true, error: { type: 'agent-error', message: 'No action for wipe!' } });
    expect(run.next).toEqual([]);
    expect(run.result).toMatchObject({ outcome: 'error', error: 'No action for wipe!' });
    expect(run.named('sessionEnded')).toEqual([['error', 1]]);
  });

  it('observes invalid arguments naming each one, and does not call the tool', async () => {
    const run = await iterate(
      { model: act('analyse', '{"depth": "deep"}'), mcp: () => makeToolResponse({ text: 'x' }) },
      { question: 'q', group: ['advanced'], state: 'analysis' },
    );
    expect(run.mcpTool!.calls).toEqual([]);
    const observation = run.next[0]!.history[0]!.observation;
    expect(observation).toMatch(/^Error: invalid arguments for tool "analyse": /);
    expect(observation).toContain('argument "dataset" is required');
    expect(observation).toContain('argument "depth" must be an integer, got "deep"');
    expect(run.next[0]!.state).toBe('analysis');
    expect(run.named('argumentsInvalid')).toHaveLength(1);
  });

  it('turns unparseable model output into a parse-error step the model can correct', async () => {
    const run = await iterate({ model: () => 'no format at all' }, { question: 'q' });
    expect(run.next[0]!.history[0]).toMatchObject({ action: '__parse_error__', thought: '' });
    expect(run.next[0]!.history[0]!.observation).toMatch(/^Error: LLM parse error: Could not parse response/);
    expect(run.result.outcome).toBe('next');
  });
});

describe('ReAct: undeclared arguments', () => {
  const model = act('analyse', '{"dataset": "d", "rm -rf": "/"}');
  const mcp = () => makeToolResponse({ text: 'ok' });
  const request = { question: 'q', group: ['advanced'], state: 'analysis' };
  const sent = (run: Awaited<ReturnType<typeof iterate>>) => run.mcpTool!.calls.map((c) => JSON.parse(c.parameters) as unknown);

  it('are dropped before the call by default', async () => {
    const run = await iterate({ model, mcp }, request);
    expect(sent(run)).toEqual([{ dataset: 'd' }]);
    expect(run.named('argumentsUndeclared').map(([, names, action]) => [names, action])).toEqual([[['rm -rf'], 'dropped']]);
  });

  it('pass through with "pass"', async () => {
    const run = await iterate({ model, mcp, settings: { undeclaredArguments: 'pass' } }, request);
    expect(sent(run)).toEqual([{ dataset: 'd', 'rm -rf': '/' }]);
  });

  it('refuse the call with "reject"', async () => {
    const run = await iterate({ model, mcp, settings: { undeclaredArguments: 'reject' } }, request);
    expect(sent(run)).toEqual([]);
    expect(run.next[0]!.history[0]!.observation).toMatch(/argument "rm -rf" is not declared by the tool/);
    expect(run.named('argumentsUndeclared').map(([, , action]) => action)).toEqual(['rejected']);
  });
});

describe('ReAct: the dialog ends in error', () => {
  const step = makeAgentStep({ thought: 't', action: 'lookup', arguments: {}, observation: 'o' });

  it('after --max-iterations steps, without asking the model, counting the session once', async () => {
    const run = await iterate({ model: answer('never'), settings: { maxIterations: 2 } }, { question: 'q', history: [step, step] });
    expect(run.prompt.calls).toEqual([]);
    expect(run.responses.at(-1)).toMatchObject({ message_type: 'error', error: { message: 'Too many agent iterations' } });
    expect(run.named('sessionEnded')).toEqual([['max-iterations', 2]]);
  });

  it('when the prompt service answers with an error', async () => {
    const failing = await iterate(
      { model: answer('unused'), prompt: () => makePromptResponse({ error: { type: 'llm-error', message: 'rate limited' } }) },
      { question: 'q' },
    );
    expect(failing.responses.at(-1)).toMatchObject({
      message_type: 'error',
      end_of_dialog: true,
      error: { type: 'agent-error', message: expect.stringContaining('prompt service error (llm-error): rate limited') },
    });
    expect(failing.result.outcome).toBe('error');
    expect(failing.events).toContainEqual(['sessionEnded', 'error', 1]);
  });

  it('throws only when even the error response cannot be published', async () => {
    const refuse = async () => {
      throw new Error('broker unreachable');
    };
    await expect(iterate({ model: answer('x'), respond: refuse }, { question: 'q' })).rejects.toThrow('broker unreachable');
  });

  it('goes on when the explainability topic refuses the triples', async () => {
    const run = await iterate(
      {
        model: answer('fine'),
        explain: async () => {
          throw new Error('explainability down');
        },
      },
      { question: 'q' },
    );
    expect(run.kinds).toEqual(['explain', 'thought', 'explain', 'answer!']);
    expect(run.result.outcome).toBe('answer');
  });
});
