/**
 * Librarian documents on the real broker: with librarian queues in the flow, every thought, observation and
 * answer is sent to the librarian (a stand-in speaking TrustGraph's librarian protocol) as TrustGraph 2.11.1's
 * agent sends it, and the explain triples link the entities to the documents (13 triples per iteration instead
 * of 7, before the orchestrator's measures). Saves run in the background: a silent librarian neither delays nor breaks a dialog, at most
 * `--librarian-max-in-flight` saves wait for it, and every outcome is counted. A flow without librarian queues
 * saves nothing and links nothing.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentResponse, Triple } from '../../src/wire/index.js';
import { startAgentHarness, type AgentHarness, type AgentHarnessOptions, type AskResult } from '../support/agent-harness.js';
import { knowledgeQueryTool } from '../../dev/flow-config.js';
import { sample, scrape } from '../support/prometheus-text.js';
import { brokerUrls } from '../support/transport-contract.js';
import type { PromptTerms } from '../../dev/stand-ins/prompt-service.js';

const { webSocketUrl } = brokerUrls();
const TG_DOCUMENT = 'https://trustgraph.ai/ns/document';

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`../fixtures/trustgraph-2.11.1/${name}`, import.meta.url), 'utf8'));

/** TrustGraph 2.11.1's all-defaults GraphRagQuery (test/fixtures/trustgraph-2.11.1/messages.json). */
const trustgraphGraphRagQuery = JSON.parse((fixture('messages.json') as Record<string, string[]>).GraphRagQuery?.[0] ?? '{}') as Record<
  string,
  unknown
>;

/** What TrustGraph 2.11.1's `save_document` sends (test/fixtures/trustgraph-2.11.1/librarian.json). */
const trustgraphRequest = JSON.parse(
  (JSON.parse(readFileSync(new URL('../fixtures/trustgraph-2.11.1/librarian.json', import.meta.url), 'utf8')) as { requests: string[] })
    .requests[0] ?? '{}',
) as Record<string, unknown>;

/** One tool call, then the answer. */
const twoSteps = (terms: PromptTerms): string =>
  (terms.history as unknown[]).length === 0
    ? 'Thought: I should ask the graph about the weather\nAction: kg\nArgs: {"question": "weather in Paris?"}'
    : 'Thought: The graph answered\nFinal Answer: Sunny in Paris';

let harness: AgentHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

async function start(options: Partial<AgentHarnessOptions>): Promise<AgentHarness> {
  harness = await startAgentHarness({
    webSocketUrl,
    tools: { kg: knowledgeQueryTool('kg') },
    script: twoSteps,
    graphRag: () => 'It is sunny in Paris.',
    ...options,
  });
  return harness;
}

function explainOf(result: AskResult, suffix: string): AgentResponse {
  const found = result.responses.find((r) => r.message_type === 'explain' && (r.explain_id ?? '').endsWith(suffix));
  if (!found) throw new Error(`no explain response for …${suffix}: ${result.responses.map((r) => r.explain_id).join(', ')}`);
  return found;
}

/** Wait until the agent's /metrics counts `count` documents with `outcome` (saves end after the dialog). */
async function documentsCounted(h: AgentHarness, outcome: string, count: number): Promise<void> {
  let text = '';
  const counted = () => sample(text, 'tg_agent_librarian_documents_total', { outcome }) ?? 0;
  for (let attempt = 0; ; attempt++) {
    text = await scrape(h.httpUrl());
    if (counted() >= count || attempt >= 100) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(counted()).toBe(count);
}

/**
 * What TrustGraph's orchestrator adds to each entity here: on the iteration `tg:toolCandidate` (one tool),
 * `tg:stepNumber` and `tg:llmDurationMs` (the prompt stand-in reports no usage); on the observation `tg:toolDurationMs`.
 */
const ITERATION_MEASURES = 3;
const OBSERVATION_MEASURES = 1;

/** The random suffix that makes an iteration's document ids its own, nobody else's to foresee. */
const SUFFIX = /\/c-[0-9a-f]{16}$/;

/** The document an entity links to (`tg:document`), as an explain client follows it. */
function linkedDocument(response: AgentResponse): string {
  const [link, ...more] = documentLinks(response.explain_triples);
  if (!link?.to || more.length > 0) throw new Error(`expected one tg:document link on ${response.explain_id}`);
  return link.to;
}

const documentLinks = (triples: readonly Triple[]) =>
  triples.filter((t) => t.p?.iri === TG_DOCUMENT).map((t) => ({ from: t.s?.iri, to: t.o?.iri }));

describe('librarian documents', () => {
  it('saves each thought, observation and answer as TrustGraph does, and the explain triples link them', async () => {
    const h = await start({ librarian: true, app: {} });
    const result = await h.ask({ question: 'What is the weather in Paris?' });
    expect(result.last).toMatchObject({ message_type: 'answer', content: 'Sunny in Paris', end_of_dialog: true });

    const librarian = h.librarian!;
    await librarian.bus.waitForCalls(3);
    const session = /^urn:trustgraph:agent:(.+)$/.exec(explainOf(result, '').explain_id ?? '')?.[1] ?? '';
    expect(session).not.toBe('');
    const thoughtId = linkedDocument(explainOf(result, '/i1'));
    const observationId = linkedDocument(explainOf(result, '/i1/observation'));
    const answerId = linkedDocument(explainOf(result, '/final'));
    expect(thoughtId).toMatch(new RegExp(`^urn:trustgraph:agent:${session}/i1/thought${SUFFIX.source}`));
    expect(observationId).toMatch(new RegExp(`^urn:trustgraph:agent:${session}/i1/observation${SUFFIX.source}`));
    expect(answerId).toMatch(new RegExp(`^urn:trustgraph:agent:${session}/answer${SUFFIX.source}`));
    const suffix = SUFFIX.exec(thoughtId)![0];

    // The stored documents hold what the dialog showed.
    const [step] = result.nextRequests[0]?.history ?? [];
    expect(step?.thought).toBe('I should ask the graph about the weather');
    expect([...librarian.documents.keys()].sort()).toEqual([answerId, thoughtId, observationId].sort());
    expect(librarian.documents.get(thoughtId)?.text).toBe(step?.thought);
    expect(librarian.documents.get(observationId)?.text).toBe(step?.observation);
    expect(librarian.documents.get(observationId)?.text).toBe('It is sunny in Paris.');
    expect(librarian.documents.get(answerId)?.text).toBe('Sunny in Paris');
    expect(librarian.documents.get(thoughtId)?.metadata).toMatchObject({ title: 'Agent Thought: kg', kind: 'text/plain', document_type: 'answer' });
    expect(librarian.documents.get(observationId)?.metadata.title).toBe('Agent Observation');
    expect(librarian.documents.get(answerId)?.metadata.title).toBe('Agent Answer: What is the weather in Paris?...');

    // Each request on the wire has TrustGraph's fields in TrustGraph's order, and a fresh `id` property.
    for (const received of librarian.bus.received) {
      const raw = JSON.parse(received.payload.toString('utf8')) as Record<string, unknown>;
      expect(Object.keys(raw)).toEqual(Object.keys(trustgraphRequest));
      expect(Object.keys(raw.document_metadata as object)).toEqual(Object.keys(trustgraphRequest.document_metadata as object));
      expect(raw).toMatchObject({ operation: 'add-document', document_id: (raw.document_metadata as { id: string }).id });
      expect(received.properties.id).toMatch(/^[0-9a-f-]{36}$/);
    }

    // The knowledge-query tool's GraphRagQuery carries every 2.11 field, with TrustGraph's defaults.
    const graphRag = JSON.parse(h.graphRag.bus.received[0]?.payload.toString('utf8') ?? '{}') as Record<string, unknown>;
    expect(Object.keys(graphRag)).toEqual(Object.keys(trustgraphGraphRagQuery));
    expect(graphRag).toEqual({
      ...trustgraphGraphRagQuery,
      query: 'weather in Paris?',
      collection: 'default',
      streaming: false,
      parent_uri: `urn:trustgraph:agent:${session}/i1`,
    });

    // 13 / 5 / 7 triples and the orchestrator's measures (the conclusion's seventh is its `tg:terminationReason`),
    // each entity linked to its document, inline and on the explainability topic.
    const iteration = explainOf(result, '/i1');
    const observation = explainOf(result, '/i1/observation');
    const conclusion = explainOf(result, '/final');
    expect(iteration.explain_triples).toHaveLength(13 + ITERATION_MEASURES);
    expect(observation.explain_triples).toHaveLength(5 + OBSERVATION_MEASURES);
    expect(conclusion.explain_triples).toHaveLength(7);
    // The entity keeps TrustGraph's URI; its document is the conversation's own.
    expect(documentLinks(iteration.explain_triples)).toEqual([{ from: thoughtId.slice(0, -suffix.length), to: thoughtId }]);
    expect(documentLinks(observation.explain_triples)).toEqual([{ from: observationId.slice(0, -suffix.length), to: observationId }]);
    expect(documentLinks(conclusion.explain_triples)).toEqual([{ from: `urn:trustgraph:agent:${session}/final`, to: answerId }]);
    await h.waitFor(() => h.explainability.length >= 4, 'four Triples messages on the explainability topic');
    const published = h.explainability.find((t) => t.metadata?.id === iteration.explain_id);
    expect(published?.triples).toEqual(iteration.explain_triples);

    await documentsCounted(h, 'saved', 3);
  });

  it('a librarian that never answers delays nothing; beyond the cap documents are skipped, counted and not linked', async () => {
    const h = await start({ librarian: () => 'silent', app: { librarianMaxInFlight: 1, librarianTimeoutSeconds: 60 } });
    const result = await h.ask({ question: 'What is the weather in Paris?' });
    expect(result.last).toMatchObject({ message_type: 'answer', content: 'Sunny in Paris', end_of_dialog: true });
    // The thought's save started (and waits): linked. The observation and the answer found the one slot taken.
    expect(documentLinks(explainOf(result, '/i1').explain_triples)).toHaveLength(1);
    expect(explainOf(result, '/i1/observation').explain_triples).toHaveLength(4 + OBSERVATION_MEASURES);
    expect(explainOf(result, '/final').explain_triples).toHaveLength(6);
    expect(h.librarian?.calls.map((c) => c.document_id)).toEqual([linkedDocument(explainOf(result, '/i1'))]);
    expect(linkedDocument(explainOf(result, '/i1'))).toMatch(new RegExp(`^${explainOf(result, '/i1').explain_id}/thought${SUFFIX.source}`));
    await documentsCounted(h, 'skipped', 2);
  });

  it('two conversations that send the same id and session_id write documents under ids of their own, which nobody could foresee', async () => {
    const h = await start({ librarian: true });
    // The second client copied the first one's `id` and `session_id` from the request topic.
    const first = await h.ask({ question: 'What is the weather in Paris?', session_id: 'shared-session' }, { id: 'copied-id' });
    const second = await h.ask({ question: 'And in Rome?', session_id: 'shared-session' }, { id: 'copied-id' });
    // The entities are TrustGraph's, named by the session: the same URIs in both.
    expect(explainOf(first, '/i1').explain_id).toBe('urn:trustgraph:agent:shared-session/i1');
    expect(explainOf(second, '/i1').explain_id).toBe(explainOf(first, '/i1').explain_id);
    await h.librarian!.bus.waitForCalls(6);
    const ids = h.librarian!.calls.map((c) => c.document_id);
    expect(new Set(ids).size).toBe(6);
    for (const id of ids) expect(id).toMatch(SUFFIX);
    const answers = [first, second].map((result) => linkedDocument(explainOf(result, '/final')));
    expect(answers[0]).not.toBe(answers[1]);
    // Each conversation's links lead to its own documents.
    expect(h.librarian!.documents.get(answers[0]!)?.text).toBe('Sunny in Paris');
    expect(h.librarian!.documents.get(answers[1]!)?.text).toBe('Sunny in Paris');
    for (const result of [first, second]) {
      for (const suffix of ['/i1', '/i1/observation', '/final']) expect(ids).toContain(linkedDocument(explainOf(result, suffix)));
    }
  });

  it('a librarian error is logged and counted; the dialog is answered as usual', async () => {
    const h = await start({ librarian: () => ({ type: 'unexpected-error', message: 'Document already exists' }), app: {} });
    const result = await h.ask({ question: 'What is the weather in Paris?' });
    expect(result.last).toMatchObject({ message_type: 'answer', content: 'Sunny in Paris', end_of_dialog: true });
    expect(result.responses.filter((r) => r.message_type === 'error')).toEqual([]);
    await h.librarian!.bus.waitForCalls(3);
    await documentsCounted(h, 'failed', 3);
  });

  it('a flow without librarian queues saves nothing and links nothing, beside one that has them', async () => {
    const h = await start({ librarian: true });
    await h.addFlow('plain', { script: twoSteps, graphRag: () => 'It is sunny in Paris.' });
    await h.configApplied();
    await h.waitReady();
    const plain = await h.ask({ question: 'What is the weather in Paris?' }, { flow: 'plain' });
    expect(plain.last).toMatchObject({ content: 'Sunny in Paris', end_of_dialog: true });
    expect(explainOf(plain, '/i1').explain_triples).toHaveLength(7 + ITERATION_MEASURES);
    expect(explainOf(plain, '/i1/observation').explain_triples).toHaveLength(4 + OBSERVATION_MEASURES);
    expect(explainOf(plain, '/final').explain_triples).toHaveLength(6);
    const withLibrarian = await h.ask({ question: 'And in Rome?' });
    expect(explainOf(withLibrarian, '/i1').explain_triples).toHaveLength(13 + ITERATION_MEASURES);
    await h.librarian!.bus.waitForCalls(3);
    // Only the flow with librarian queues sent documents.
    const sessionOf = (r: AskResult) => explainOf(r, '/i1').explain_id?.replace(/\/i1$/, '') ?? '';
    expect(h.librarian!.calls.every((c) => c.document_id.startsWith(sessionOf(withLibrarian)))).toBe(true);
    expect(h.librarian!.calls).toHaveLength(3);
  });
});
