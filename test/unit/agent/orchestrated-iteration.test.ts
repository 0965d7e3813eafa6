/**
 * A ReAct iteration run as the orchestrator's `react` pattern (as the service always runs it): its explain
 * entities carry what TrustGraph 2.11.1's orchestrator records — the offered tools, the step number, the model
 * call's duration and usage, the tool's duration and error — and graph RAG's own explain trace is handed on to
 * the client, under the iteration, with the observation deriving from it. Run as TrustGraph's ReAct agent, the
 * iteration records none of that.
 */
import { describe, expect, it } from 'vitest';
import { UsageTracker } from '../../../src/agent/usage.js';
import {
  iriTerm,
  literalTerm,
  makeGraphRagResponse,
  makePromptResponse,
  type AgentResponse,
  type GraphRagQuery,
  type GraphRagResponse,
  type Triple,
} from '../../../src/wire/index.js';
import type { FakeAnswer } from '../../support/fake-clients.js';
import { act, graphAnswer, iterate } from '../../support/iteration-run.js';

const TG = 'https://trustgraph.ai/ns/';
const DERIVED_FROM = 'http://www.w3.org/ns/prov#wasDerivedFrom';
const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const SESSION = 'urn:trustgraph:agent:s';

const orchestrated = () => ({ usage: new UsageTracker(), terminationReasons: true });

/** The objects of `predicate` in the explain response of `entity`. */
function objects(responses: readonly AgentResponse[], entity: string, predicate: string): string[] {
  const explain = responses.find((r) => r.message_type === 'explain' && r.explain_id === entity);
  if (!explain) throw new Error(`no explain response for ${entity}`);
  return explain.explain_triples.filter((t) => t.p?.iri === predicate).map((t) => t.o?.iri || t.o?.value || '');
}

const SUB_TRACE_TRIPLE: Triple = {
  s: iriTerm('urn:trustgraph:question:q1'),
  p: iriTerm('https://trustgraph.ai/ns/query'),
  o: literalTerm('who?'),
  g: 'urn:graph:retrieval',
};

/** Graph RAG with a two-entity trace before its answer, as TrustGraph's sends it. */
const tracedGraphRag: FakeAnswer<GraphRagQuery, GraphRagResponse> = () => [
  makeGraphRagResponse({ message_type: 'explain', explain_id: 'urn:trustgraph:question:q1', explain_graph: 'urn:graph:retrieval', explain_triples: [SUB_TRACE_TRIPLE] }),
  makeGraphRagResponse({ message_type: 'explain', explain_id: '' }),
  makeGraphRagResponse({ message_type: 'explain', explain_id: 'urn:trustgraph:exploration:q1', explain_graph: 'urn:graph:retrieval' }),
  makeGraphRagResponse({ message_type: 'chunk', response: 'Acme', end_of_stream: true, end_of_session: true }),
];

describe('an orchestrated ReAct iteration', () => {
  it("records the offered tools, the step number, and the agent-react call's duration and usage on the iteration", async () => {
    const orchestration = orchestrated();
    // A meta-router call of the same message was counted before: the iteration records only its own call.
    orchestration.usage.track({ in_token: 5, out_token: 5, model: 'router-model' });
    const run = await iterate(
      {
        model: () => '',
        prompt: () => makePromptResponse({ text: 'Thought: look\nAction: lookup\nArgs: {"question": "who?"}', in_token: 100, out_token: 10, model: 'react-model', end_of_stream: true }),
        graphRag: graphAnswer('Acme'),
        orchestration,
      },
      { question: 'q', group: ['read-only', 'advanced'], state: 'analysis', session_id: 's' },
    );
    const iteration = `${SESSION}/i1`;
    expect(objects(run.responses, iteration, `${TG}toolCandidate`)).toEqual(['analyse', 'lookup']);
    expect(objects(run.responses, iteration, `${TG}stepNumber`)).toEqual(['1']);
    expect(objects(run.responses, iteration, `${TG}llmDurationMs`)).toEqual([expect.stringMatching(/^\d+$/)]);
    expect(objects(run.responses, iteration, `${TG}inToken`)).toEqual(['100']);
    expect(objects(run.responses, iteration, `${TG}outToken`)).toEqual(['10']);
    expect(objects(run.responses, iteration, `${TG}llmModel`)).toEqual(['react-model']);
    // The message's tracker sums both calls, for the final message.
    expect(orchestration.usage.fields()).toEqual({ in_token: 105, out_token: 15, model: 'react-model' });
    // The same triples went to the explainability topic.
    const published = run.explained.find((t) => t.metadata?.id === iteration);
    expect(published?.triples).toEqual(run.responses.find((r) => r.explain_id === iteration)?.explain_triples);
  });

  it('leaves out the usage the prompt service did not report', async () => {
    const run = await iterate({ model: act('lookup', '{"question": "who?"}'), graphRag: graphAnswer('Acme'), orchestration: orchestrated() }, { question: 'q', group: ['read-only'], session_id: 's' });
    for (const p of ['inToken', 'outToken', 'llmModel']) expect(objects(run.responses, `${SESSION}/i1`, `${TG}${p}`)).toEqual([]);
    expect(objects(run.responses, `${SESSION}/i1`, `${TG}stepNumber`)).toEqual(['1']);
  });

  it("hands graph RAG's trace on under the iteration, and derives the observation from its last entity", async () => {
    const run = await iterate({ model: act('lookup', '{"question": "who?"}'), graphRag: tracedGraphRag, orchestration: orchestrated() }, { question: 'q', group: ['read-only'], session_id: 's' });
    expect(run.graphRag!.calls[0]!.parent_uri).toBe(`${SESSION}/i1`);
    // An explain event without an id is dropped, as TrustGraph's client does.
    expect(run.responses.map((r) => r.explain_id || r.message_type)).toEqual([
      SESSION,
      'thought',
      `${SESSION}/i1`,
      'urn:trustgraph:question:q1',
      'urn:trustgraph:exploration:q1',
      'observation',
      `${SESSION}/i1/observation`,
    ]);
    expect(run.responses[3]).toMatchObject({ message_type: 'explain', explain_graph: 'urn:graph:retrieval', explain_triples: [SUB_TRACE_TRIPLE] });
    expect(objects(run.responses, `${SESSION}/i1/observation`, DERIVED_FROM)).toEqual(['urn:trustgraph:exploration:q1']);
    expect(objects(run.responses, `${SESSION}/i1/observation`, `${TG}toolDurationMs`)).toEqual([expect.stringMatching(/^\d+$/)]);
    expect(objects(run.responses, `${SESSION}/i1/observation`, `${TG}toolError`)).toEqual([]);
    // Graph RAG publishes its own trace; the agent does not publish it again.
    expect(run.explained.map((t) => t.metadata?.id)).toEqual([SESSION, `${SESSION}/i1`, `${SESSION}/i1/observation`]);
  });

  it('does not hand on a sub-trace entity whose id is too long for a message', async () => {
    const huge: FakeAnswer<GraphRagQuery, GraphRagResponse> = () => [
      makeGraphRagResponse({ message_type: 'explain', explain_id: `urn:x:${'a'.repeat(100_000)}`, explain_graph: 'urn:graph:retrieval' }),
      makeGraphRagResponse({ message_type: 'chunk', response: 'Acme', end_of_stream: true, end_of_session: true }),
    ];
    const run = await iterate({ model: act('lookup', '{"question": "who?"}'), graphRag: huge, orchestration: orchestrated() }, { question: 'q', group: ['read-only'], session_id: 's' });
    expect(run.kinds).toEqual(['explain', 'thought', 'explain', 'observation', 'explain']);
    expect(objects(run.responses, `${SESSION}/i1/observation`, DERIVED_FROM)).toEqual([`${SESSION}/i1`]);
    expect(run.next[0]!.history[0]!.observation).toBe('Acme');
  });

  it("records a failed tool's error on the observation, which is then also a tg:Error", async () => {
    const failing: FakeAnswer<GraphRagQuery, GraphRagResponse> = () =>
      makeGraphRagResponse({ error: { type: 'graph-rag-error', message: 'no graph' }, end_of_session: true });
    const run = await iterate({ model: act('lookup', '{"question": "who?"}'), graphRag: failing, orchestration: orchestrated() }, { question: 'q', group: ['read-only'], session_id: 's' });
    const observation = `${SESSION}/i1/observation`;
    expect(objects(run.responses, observation, `${TG}toolError`)).toEqual(['graph-rag error (graph-rag-error): no graph']);
    expect(objects(run.responses, observation, RDF_TYPE)).toContain(`${TG}Error`);
    expect(objects(run.responses, observation, DERIVED_FROM)).toEqual([`${SESSION}/i1`]);
  });

  it('records a parse failure as a tool error of a tool that never ran', async () => {
    const run = await iterate({ model: () => 'no format at all', orchestration: orchestrated() }, { question: 'q', session_id: 's', state: null });
    const observation = `${SESSION}/i1/observation`;
    expect(objects(run.responses, observation, `${TG}toolDurationMs`)).toEqual(['0']);
    expect(objects(run.responses, observation, `${TG}toolError`)).toEqual([expect.stringMatching(/^LLM parse error: Could not parse response/)]);
    // No tool ran, so the state goes on as it came, null too (as TrustGraph's orchestrator carries it).
    expect(run.next[0]!.state).toBeNull();
  });

  it('records a refused call (a tool not offered) as a tool error, with no duration', async () => {
    const run = await iterate({ model: act('wipe', '{}'), orchestration: orchestrated() }, { question: 'q', group: ['read-only'], session_id: 's' });
    const observation = `${SESSION}/i1/observation`;
    expect(objects(run.responses, observation, `${TG}toolDurationMs`)).toEqual(['0']);
    expect(objects(run.responses, observation, `${TG}toolError`)).toEqual([
      'tool "wipe" is not available in this conversation\'s groups and state. Available tools: lookup.',
    ]);
  });
});

describe("a ReAct iteration run as TrustGraph's ReAct agent", () => {
  it('records no measures and hands no sub-trace on, as that agent does', async () => {
    const run = await iterate({ model: act('lookup', '{"question": "who?"}'), graphRag: tracedGraphRag }, { question: 'q', group: ['read-only'], session_id: 's' });
    expect(run.kinds).toEqual(['explain', 'thought', 'explain', 'observation', 'explain']);
    expect(run.graphRag!.calls[0]!.parent_uri).toBe('');
    const predicates = run.responses.flatMap((r) => r.explain_triples.map((t) => t.p?.iri ?? ''));
    for (const p of ['toolCandidate', 'stepNumber', 'llmDurationMs', 'toolDurationMs']) expect(predicates).not.toContain(`${TG}${p}`);
    expect(objects(run.responses, `${SESSION}/i1/observation`, DERIVED_FROM)).toEqual([`${SESSION}/i1`]);
  });
});
