/**
 * Librarian documents and the explain triples that link them, against what TrustGraph 2.11.1's own code produces
 * (`test/fixtures/trustgraph-2.11.1/librarian.json` and `explain.json`, written by `generate.py` there from
 * `save_document` and the `trustgraph.provenance` helpers with the arguments `agent/react/service.py` passes).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { addDocumentRequest, agentDocuments } from '../../../src/agent/agent-documents.js';
import { conclusionTriples, iterationTriples, observationTriples } from '../../../src/agent/explainability.js';
import { librarianRequestCodec, pythonJsonDumps, tripleCodec, type Triple } from '../../../src/wire/index.js';

const fixture = <T>(name: string): T =>
  JSON.parse(readFileSync(new URL(`../../fixtures/trustgraph-2.11.1/${name}`, import.meta.url), 'utf8')) as T;

const librarian = fixture<{ question: string; session: string; requests: string[] }>('librarian.json');
const explain = fixture<{ session: string; arguments: Record<string, string>; cases: Record<string, unknown[]> }>('explain.json');

describe('librarian add-document requests', () => {
  const session = librarian.session;
  const ours = [
    agentDocuments.thought(session, 1, 'weather', 'I should look up the weather \u2600'),
    agentDocuments.observation(session, 1, 'Sunny, 21 \u00b0C'),
    agentDocuments.answer(session, librarian.question, 'Wear a hat.'),
  ];
  it.each([0, 1, 2])('document %i is written byte for byte as save_document writes it', (i) => {
    const document = ours[i];
    if (!document) throw new Error('missing case');
    expect(librarianRequestCodec.encode(addDocumentRequest(document)).toString('utf8')).toBe(librarian.requests[i]);
  });
  it('the answer title cuts the question at 50 code points, as Python does', () => {
    const question = `${'é'.repeat(49)}😀tail`;
    expect(agentDocuments.answer('s', question, 'a').title).toBe(`Agent Answer: ${'é'.repeat(49)}😀...`);
  });
});

describe('explain triples linking the documents', () => {
  const { session, arguments: args, cases } = explain;
  const wire = (triples: Triple[]) => triples.map((t) => tripleCodec.encode(t).toString('utf8'));
  const expected = (name: string) => (cases[name] ?? []).map((t) => pythonJsonDumps(t));

  it('iteration with a saved thought: 13 triples, as TrustGraph', () => {
    const triples = iterationTriples(session, 1, 'weather', args, `urn:trustgraph:agent:${session}/i1/thought`);
    expect(triples).toHaveLength(13);
    expect(wire(triples)).toEqual(expected('iteration1_with_thought_document'));
  });
  it('iteration without a document: 7 triples, as TrustGraph when the save failed', () => {
    expect(wire(iterationTriples(session, 2, 'weather', args))).toEqual(expected('iteration2_without_document'));
  });
  it('observation with and without its document', () => {
    const doc = `urn:trustgraph:agent:${session}/i1/observation`;
    expect(wire(observationTriples(session, 1, doc))).toEqual(expected('observation1_with_document'));
    expect(wire(observationTriples(session, 1))).toEqual(expected('observation1_without_document'));
  });
  it('conclusion with and without its document', () => {
    const doc = `urn:trustgraph:agent:${session}/answer`;
    expect(wire(conclusionTriples(session, 2, doc))).toEqual(expected('final2_with_document'));
    expect(wire(conclusionTriples(session, 1))).toEqual(expected('final1_without_document'));
  });
});
