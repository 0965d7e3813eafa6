/**
 * The agent answers exactly what TrustGraph's API gateway sends (docs/trustgraph-wire-notes.md §5.4) with the message sequences the
 * gateway relays (docs/trustgraph-agent-notes.md §3.11), on the real broker: the request is published as the gateway's JSON text
 * (Python json.dumps spelling, `state: null, group: null, history: []`), the responses are read as raw JSON.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentResponse } from '../../src/wire/index.js';
import { startAgentHarness, type AgentHarness, type AgentHarnessOptions, type AskResult } from '../support/agent-harness.js';
import { knowledgeQueryTool } from '../../dev/flow-config.js';
import { brokerUrls } from '../support/transport-contract.js';
import type { PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import { testTransports } from '../support/transports.js';
import { AGENT_RESPONSE_FIELDS } from '../support/trustgraph-fields.js';

const { webSocketUrl } = brokerUrls();

/** Byte for byte what the gateway's AgentRequestor publishes for `{"question": q, "streaming": s}`. */
function gatewayRequest(question: string, streaming: boolean): string {
  return (
    `{"question": ${JSON.stringify(question)}, "state": null, "group": null, "history": [], "collection": "default", ` +
    `"streaming": ${streaming ? 'true' : 'false'}, "session_id": "", "conversation_id": "", "pattern": "", ` +
    `"task_type": "", "framing": "", "correlation_id": "", "parent_session_id": "", "subagent_goal": "", ` +
    `"expected_siblings": 0}`
  );
}


const AGENT_REQUEST_FIELDS = [
  'collection',
  'conversation_id',
  'correlation_id',
  'expected_siblings',
  'framing',
  'group',
  'history',
  'parent_session_id',
  'pattern',
  'question',
  'session_id',
  'state',
  'streaming',
  'subagent_goal',
  'task_type',
];

const SESSION_URI = /^urn:trustgraph:agent:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;
const TG_QUERY = 'https://trustgraph.ai/ns/query';

/** Every response: all AgentResponse fields on the wire, `error: null`, the request's id property. */
function expectWellFormed(result: AskResult): void {
  expect(result.messages.length).toBeGreaterThan(0);
  for (const message of result.messages) {
    expect(Object.keys(message.raw).sort()).toEqual(AGENT_RESPONSE_FIELDS);
    expect(message.raw.error).toBeNull();
    expect(message.properties.id).toBe(result.id);
  }
  expect(result.undecodable).toEqual([]);
}

/** The session id, read from the first (session) explain message. */
function sessionOf(result: AskResult): string {
  const first = result.responses[0];
  expect(first?.message_type).toBe('explain');
  const match = SESSION_URI.exec(first?.explain_id ?? '');
  expect(match, `session explain_id ${first?.explain_id}`).not.toBeNull();
  return match?.[1] ?? '';
}

function types(responses: readonly AgentResponse[]): string {
  return responses.map((r) => r.message_type).join(' ');
}

function expectExplain(response: AgentResponse | undefined, explainId: string): void {
  expect(response?.message_type).toBe('explain');
  expect(response?.explain_id).toBe(explainId);
  expect(response?.explain_graph).toBe('urn:graph:retrieval');
  expect(response?.explain_triples.length).toBeGreaterThan(0);
  expect(response?.message_id).toBe('');
  expect(response?.end_of_dialog).toBe(false);
}

const QUESTION = 'What is the capital of France?';

describe.each(testTransports())('gateway compatibility (real broker) [%s]', (transportKind) => {
  let harness: AgentHarness | undefined;

  afterEach(async () => {
    await harness?.stop();
    harness = undefined;
  });

  const start = async (options: Omit<AgentHarnessOptions, 'webSocketUrl'>): Promise<AgentHarness> => {
    harness = await startAgentHarness({ transport: transportKind, webSocketUrl, ...options });
    return harness;
  };

  it('non-streaming: explain, thought, explain, answer (eom+eod, content)', async () => {
    const h = await start({ script: () => 'Thought: The capital of France is Paris\nFinal Answer: Paris.' });
    const result = await h.askRaw(gatewayRequest(QUESTION, false));

    expectWellFormed(result);
    expect(types(result.responses)).toBe('explain thought explain answer');
    const session = sessionOf(result);
    const [sessionExplain, thought, conclusion, answer] = result.responses;

    expectExplain(sessionExplain, `urn:trustgraph:agent:${session}`);
    const query = sessionExplain?.explain_triples.find((t) => t.p?.iri === TG_QUERY);
    expect(query?.o?.value).toBe(QUESTION);

    expect(thought).toMatchObject({
      content: 'The capital of France is Paris',
      end_of_message: true,
      end_of_dialog: false,
      message_id: `urn:trustgraph:agent:${session}/i1/thought`,
    });
    expectExplain(conclusion, `urn:trustgraph:agent:${session}/final`);
    expect(answer).toMatchObject({
      message_type: 'answer',
      content: 'Paris.',
      end_of_message: true,
      end_of_dialog: true,
      message_id: `urn:trustgraph:agent:${session}/final`,
      error: null,
    });
    expect(result.nextRequests).toEqual([]);

    // What the model was shown: the agent-react template with JSON-encoded terms.
    const call = h.prompt.lastReact();
    expect(call.streaming).toBe(false);
    expect(call.terms).toEqual({ question: QUESTION, tools: [], context: null, tool_names: '', history: [] });
  });

  it('streaming: thought chunks, answer chunks, explain, empty answer with eom+eod', async () => {
    const h = await start({
      script: () => ['Thought: The capital', ' of France is Paris\nFinal', ' Answer: Par', 'is.'],
    });
    const result = await h.askRaw(gatewayRequest(QUESTION, true));

    expectWellFormed(result);
    expect(types(result.responses)).toMatch(/^explain (thought )+(answer )+explain answer$/);
    const session = sessionOf(result);

    const thoughts = result.responses.filter((r) => r.message_type === 'thought');
    expect(thoughts.map((t) => t.content).join('').trim()).toBe('The capital of France is Paris');
    for (const t of thoughts) expect(t.message_id).toBe(`urn:trustgraph:agent:${session}/i1/thought`);
    expect(thoughts.at(-1)?.end_of_message).toBe(true);
    for (const t of thoughts.slice(0, -1)) expect(t.end_of_message).toBe(false);
    for (const t of thoughts) expect(t.end_of_dialog).toBe(false);

    const answers = result.responses.filter((r) => r.message_type === 'answer');
    const chunks = answers.slice(0, -1);
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.map((a) => a.content).join('').trim()).toBe('Paris.');
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({ end_of_message: false, end_of_dialog: false, message_id: `urn:trustgraph:agent:${session}/final` });
    }

    expectExplain(result.responses.at(-2), `urn:trustgraph:agent:${session}/final`);
    expect(result.last).toBe(result.responses.at(-1));
    expect(result.last).toMatchObject({
      message_type: 'answer',
      content: '',
      end_of_message: true,
      end_of_dialog: true,
      message_id: `urn:trustgraph:agent:${session}/final`,
    });
    expect(h.prompt.lastReact().streaming).toBe(true);
  });

  const toolScript = (terms: PromptTerms): string => {
    const history = terms.history as { observation: string }[];
    if (history.length === 0) {
      return 'Thought: I need to look this up\nAction: knowledge-query\nArgs: {\n  "question": "What is X?"\n}';
    }
    return `Thought: I have the answer\nFinal Answer: ${history[0]?.observation ?? ''}`;
  };

  it('non-streaming tool iteration: observation, a next request with the same id, then the answer', async () => {
    const h = await start({
      tools: { 'knowledge-query': knowledgeQueryTool('knowledge-query') },
      script: toolScript,
      graphRag: () => 'X is a test thing.',
    });
    const result = await h.askRaw(gatewayRequest('Tell me about X', false));

    expectWellFormed(result);
    // Graph RAG's own explain event is handed on between the iteration's and the observation, as TrustGraph's
    // orchestrator does, and the observation derives from it.
    expect(types(result.responses)).toBe('explain thought explain explain observation explain thought explain answer');
    const session = sessionOf(result);
    const uri = `urn:trustgraph:agent:${session}`;
    const r = result.responses;
    expect(r.map((m) => m.message_id)).toEqual([
      '',
      `${uri}/i1/thought`,
      '',
      '',
      `${uri}/i1/observation`,
      '',
      `${uri}/i2/thought`,
      '',
      `${uri}/final`,
    ]);
    const subTrace = r[3]!.explain_id ?? '';
    expect(subTrace).toMatch(/^urn:trustgraph:question:[0-9a-f-]{36}$/);
    expect(r.filter((m) => m.message_type === 'explain').map((m) => m.explain_id)).toEqual([
      uri,
      `${uri}/i1`,
      subTrace,
      `${uri}/i1/observation`,
      `${uri}/final`,
    ]);
    const observationEntity = r[5]!.explain_triples;
    expect(observationEntity.find((t) => t.p?.iri.endsWith('#wasDerivedFrom'))?.o?.iri).toBe(subTrace);
    expect(r[1]).toMatchObject({ content: 'I need to look this up', end_of_message: true, end_of_dialog: false });
    expect(r[4]).toMatchObject({ content: 'X is a test thing.', end_of_message: true, end_of_dialog: false });
    expect(result.last).toMatchObject({ message_type: 'answer', content: 'X is a test thing.', end_of_dialog: true });

    // The graph-rag service got TrustGraph's request (collection from the tool, limits 0 = defaults, its trace
    // under the iteration).
    expect(h.graphRag.calls).toHaveLength(1);
    expect(h.graphRag.calls[0]).toMatchObject({ query: 'What is X?', collection: 'default', parent_uri: `${uri}/i1`, streaming: false, entity_limit: 0 });

    // The next request went back to the request topic under the same id, complete, with the step in history.
    expect(result.nextMessages).toHaveLength(1);
    const next = result.nextMessages[0];
    expect(next?.properties.id).toBe(result.id);
    expect(Object.keys(next?.raw ?? {}).sort()).toEqual(AGENT_REQUEST_FIELDS);
    expect(next?.raw).toMatchObject({
      question: 'Tell me about X',
      state: 'undefined',
      group: null,
      collection: 'default',
      streaming: false,
      session_id: session,
      history: [
        {
          thought: 'I need to look this up',
          action: 'knowledge-query',
          arguments: { question: 'What is X?' },
          observation: 'X is a test thing.',
          step_type: '',
          plan: [],
          subagent_results: {},
        },
      ],
    });
    // The same provenance went to the flow's explainability topic as Triples.
    await h.waitFor(() => h.explainability.length >= 4, 'four Triples messages on the explainability topic');
    expect(h.explainability.map((t) => t.metadata)).toEqual(
      [uri, `${uri}/i1`, `${uri}/i1/observation`, `${uri}/final`].map((id) => ({ id, root: '', collection: 'default' })),
    );
    // Graph RAG publishes its own trace; only the agent's entities are published by the agent.
    expect(h.explainability.map((t) => t.triples)).toEqual(
      r.filter((m) => m.message_type === 'explain' && m.explain_id !== subTrace).map((m) => m.explain_triples),
    );

    // The second iteration showed the model the history.
    expect(h.prompt.reactCalls()).toHaveLength(2);
    expect(h.prompt.lastReact().terms.history).toEqual([
      { thought: 'I need to look this up', action: 'knowledge-query', arguments: { question: 'What is X?' }, observation: 'X is a test thing.' },
    ]);
  });

  it('streaming tool iteration keeps the relayable shape', async () => {
    const h = await start({
      tools: { 'knowledge-query': knowledgeQueryTool('knowledge-query') },
      script: (terms) => {
        const text = toolScript(terms);
        return [text.slice(0, 15), text.slice(15, 40), text.slice(40)];
      },
      graphRag: () => 'X is a test thing.',
    });
    const result = await h.askRaw(gatewayRequest('Tell me about X', true));

    expectWellFormed(result);
    expect(types(result.responses)).toMatch(/^explain (thought )+explain explain observation explain (thought )+(answer )+explain answer$/);
    const session = sessionOf(result);
    const observation = result.responses.find((m) => m.message_type === 'observation');
    expect(observation).toMatchObject({
      content: 'X is a test thing.',
      end_of_message: true,
      message_id: `urn:trustgraph:agent:${session}/i1/observation`,
    });
    expect(result.answer.trim()).toBe('X is a test thing.');
    expect(result.last).toMatchObject({ message_type: 'answer', content: '', end_of_message: true, end_of_dialog: true });
    expect(result.nextRequests).toHaveLength(1);
    expect(result.nextRequests[0]?.streaming).toBe(true);
  });

  it('structured-query, row-embeddings-query, text-completion and prompt tools call their services as TrustGraph does', async () => {
    const steps = [
      'Action: sql\nArgs: {"question": "total sales?"}',
      'Action: rows\nArgs: {"query": "Alice"}',
      'Action: llm\nArgs: {"question": "Say hi"}',
      'Action: summarise\nArgs: {"text": "long text"}',
    ];
    const h = await start({
      tools: {
        a: { name: 'sql', description: 'Structured data', type: 'structured-query', collection: 'sales' },
        b: { name: 'rows', description: 'Row search', type: 'row-embeddings-query', 'schema-name': 'customers', 'index-name': 'name', limit: 2, collection: 'crm' },
        c: { name: 'llm', description: 'Plain LLM', type: 'text-completion' },
        d: {
          name: 'summarise',
          description: 'Summaries',
          type: 'prompt',
          template: 'summary-template',
          arguments: [{ name: 'text', type: 'string', description: 'Text to summarise' }],
        },
      },
      script: (terms) => {
        const n = (terms.history as unknown[]).length;
        return n < steps.length ? `Thought: step ${n + 1}\n${steps[n] ?? ''}` : 'Thought: all done\nFinal Answer: done';
      },
      templates: {
        question: (terms) => `LLM says: ${String(terms.question)}`,
        'summary-template': (terms) => `Summary of ${String(terms.text)}`,
      },
    });
    h.structuredQuery.answer = () => ({ total: 42 });
    h.rowEmbeddings.search = () => [
      { index_name: 'name', index_value: ['Alice', 'Smith'], text: 'Alice Smith', score: 0.98765 },
      { index_name: 'name', index_value: ['Alicia'], text: 'Alicia', score: 0.5 },
      { index_name: 'name', index_value: ['Al'], text: 'Al', score: 0.1 },
    ];

    const result = await h.askRaw(gatewayRequest('Run every tool', false));
    expectWellFormed(result);
    expect(result.last).toMatchObject({ message_type: 'answer', content: 'done', end_of_dialog: true });
    expect(result.responses.filter((m) => m.message_type === 'observation').map((m) => m.content)).toEqual([
      JSON.stringify('{"total":42}'),
      'Matching records:\n- name: Alice, Smith (score: 0.988)\n- name: Alicia (score: 0.500)',
      'LLM says: Say hi',
      'Summary of long text',
    ]);
    expect(result.nextRequests.map((n) => n.history.length)).toEqual([1, 2, 3, 4]);
    expect(result.nextRequests[3]?.history.map((s) => [s.action, s.arguments])).toEqual([
      ['sql', { question: 'total sales?' }],
      ['rows', { query: 'Alice' }],
      ['llm', { question: 'Say hi' }],
      ['summarise', { text: 'long text' }],
    ]);

    expect(h.structuredQuery.calls).toEqual([{ question: 'total sales?', collection: 'sales' }]);
    expect(h.embeddings.calls).toEqual([{ texts: ['Alice'] }]);
    expect(h.rowEmbeddings.calls).toHaveLength(1);
    expect(h.rowEmbeddings.calls[0]).toMatchObject({ schema_name: 'customers', collection: 'crm', limit: 2, index_name: 'name' });
    expect(h.rowEmbeddings.calls[0]?.vector).toEqual(h.embeddings.embed('Alice'));
    const templateCalls = h.prompt.calls.filter((c) => c.id !== 'agent-react');
    expect(templateCalls.map((c) => [c.id, c.terms, c.streaming])).toEqual([
      ['question', { question: 'Say hi' }, false],
      ['summary-template', { text: 'long text' }, false],
    ]);
  });

  it('a failing dialog ends with one error response the gateway turns into its final error frame', async () => {
    const h = await start({ script: () => ({ error: { type: 'llm-error', message: 'model unavailable' } }) });
    const result = await h.askRaw(gatewayRequest(QUESTION, false));

    expect(types(result.responses)).toBe('explain error');
    for (const message of result.messages) {
      expect(Object.keys(message.raw).sort()).toEqual(AGENT_RESPONSE_FIELDS);
      expect(message.properties.id).toBe(result.id);
    }
    expect(result.messages[0]?.raw.error).toBeNull();
    expect(result.last).toMatchObject({
      message_type: 'error',
      end_of_message: true,
      end_of_dialog: true,
      error: { type: 'agent-error' },
    });
    expect(result.last.error?.message).toContain('model unavailable');
    expect(result.last.content).toBe(result.last.error?.message);
  });
});
