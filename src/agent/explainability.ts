/**
 * Explainability (provenance) triples of one conversation, as TrustGraph's ReAct agent emits them
 * (docs/trustgraph-agent-notes.md §3.12): a session (question), one analysis per tool iteration, one observation per tool
 * result, and a conclusion. They are published on the flow's `explainability` topic and sent inline
 * in `explain` responses, all in the graph `urn:graph:retrieval`.
 */
import { createHash } from 'node:crypto';
import { iriTerm, literalTerm, pythonJsonDumps, type Term, type Triple } from '../wire/index.js';

export const RETRIEVAL_GRAPH = 'urn:graph:retrieval';

const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const RDFS_LABEL = 'http://www.w3.org/2000/01/rdf-schema#label';
const PROV = 'http://www.w3.org/ns/prov#';
const TG = 'https://trustgraph.ai/ns/';
/** Links an entity to its librarian document. */
const TG_DOCUMENT = `${TG}document`;

const iri = iriTerm;
const literal = (value: string): Term => literalTerm(value);
const triple = (s: string, p: string, o: Term): Triple => ({ s: iri(s), p: iri(p), o, g: RETRIEVAL_GRAPH });

const literalIfSet = (s: string, p: string, value: string | number | null | undefined): Triple[] =>
  value === null || value === undefined ? [] : [triple(s, p, literal(String(value)))];

/** Session ids longer than this are not put into URIs and message ids as they are. */
export const MAX_SESSION_ID_IN_URI = 256;

/** Characters a session id may use to go into URIs unchanged (what UUIDs and TrustGraph's own ids use). */
const URI_SAFE_SESSION_ID = /^[A-Za-z0-9._~-]*$/;

/**
 * The part of a conversation's URIs that names it: the session id itself when it is URI-safe (as TrustGraph
 * writes it: a UUID), percent-encoded when it is not (a client's `../x`, NUL, newline or `<script>` never reaches
 * a URI or a librarian document id raw), and for an id longer than MAX_SESSION_ID_IN_URI once encoded,
 * `sha256-<hex>` of it, so that every message id and explain triple stays small however large the id the
 * client sent. The same id always gives the same key, on any replica and in every iteration.
 */
export function sessionUriKey(sessionId: string): string {
  const key = URI_SAFE_SESSION_ID.test(sessionId) ? sessionId : percentEncoded(sessionId);
  if (key !== undefined && key.length <= MAX_SESSION_ID_IN_URI) return key;
  return `sha256-${createHash('sha256').update(sessionId, 'utf8').digest('hex')}`;
}

/** `undefined` for a string with a lone surrogate, which has no UTF-8 form to encode. */
function percentEncoded(text: string): string | undefined {
  try {
    return encodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** The URIs of one conversation's entities; `sessionId` is the `sessionUriKey`. */
export const provenanceUris = {
  session: (sessionId: string) => `urn:trustgraph:agent:${sessionId}`,
  iteration: (sessionId: string, n: number) => `urn:trustgraph:agent:${sessionId}/i${n}`,
  thought: (sessionId: string, n: number) => `urn:trustgraph:agent:${sessionId}/i${n}/thought`,
  observation: (sessionId: string, n: number) => `urn:trustgraph:agent:${sessionId}/i${n}/observation`,
  final: (sessionId: string) => `urn:trustgraph:agent:${sessionId}/final`,
};

/** What the iteration or conclusion derives from: the session on the first iteration, else the last observation. */
function derivedFrom(sessionId: string, n: number, first?: string): string {
  return n <= 1 ? (first ?? provenanceUris.session(sessionId)) : provenanceUris.observation(sessionId, n - 1);
}

/** `parentUri`: the entity a subagent's session derives from (its supervisor's decomposition). */
export function sessionTriples(sessionId: string, question: string, startedAt: Date, parentUri?: string): Triple[] {
  const uri = provenanceUris.session(sessionId);
  return [
    triple(uri, RDF_TYPE, iri(`${PROV}Entity`)),
    triple(uri, RDF_TYPE, iri(`${TG}Question`)),
    triple(uri, RDF_TYPE, iri(`${TG}AgentQuestion`)),
    triple(uri, RDFS_LABEL, literal('Agent Question')),
    triple(uri, `${PROV}startedAtTime`, literal(startedAt.toISOString())),
    triple(uri, `${TG}query`, literal(question)),
    ...(parentUri !== undefined ? [triple(uri, `${PROV}wasDerivedFrom`, iri(parentUri))] : []),
  ];
}

/**
 * What TrustGraph's orchestrator measures about one iteration: the tools the model was offered, the model
 * call's duration and its token usage (the `agent-react` call's own, not the message's sum).
 */
export interface IterationMeasures {
  readonly toolCandidates: readonly string[];
  readonly llmDurationMs: number;
  readonly inToken: number | null;
  readonly outToken: number | null;
  readonly model: string | null;
}

/** What the orchestrator records about a tool's run on its observation. */
export interface ObservationMeasures {
  /** The last entity of the explain trace the tool's service sent (graph RAG's), instead of the iteration. */
  readonly derivedFrom?: string;
  /** 0 when the tool was not called. */
  readonly toolDurationMs: number;
  /** Why the step failed (the tool's error, a refusal, a parse failure); the observation is then also a `tg:Error`. */
  readonly toolError?: string;
}

/**
 * With `thoughtDocumentId` (the thought was saved to the librarian) six more triples describe the thought:
 * the iteration's `tg:thought`, the thought's types, label, derivation and `tg:document` — 13 in all, as TrustGraph.
 * With `measures` (orchestrated iterations, as TrustGraph's orchestrator writes them): one `tg:toolCandidate` per
 * offered tool, `tg:stepNumber`, `tg:llmDurationMs` and the call's `tg:inToken` / `tg:outToken` / `tg:llmModel`.
 */
export function iterationTriples(
  sessionId: string,
  n: number,
  action: string,
  args: Readonly<Record<string, unknown>>,
  thoughtDocumentId?: string,
  firstDerivedFrom?: string,
  measures?: IterationMeasures,
): Triple[] {
  const uri = provenanceUris.iteration(sessionId, n);
  const triples = [
    triple(uri, RDF_TYPE, iri(`${PROV}Entity`)),
    triple(uri, RDF_TYPE, iri(`${TG}Analysis`)),
    triple(uri, RDF_TYPE, iri(`${TG}ToolUse`)),
    triple(uri, RDFS_LABEL, literal(`Analysis: ${action}`)),
    triple(uri, `${TG}action`, literal(action)),
    triple(uri, `${TG}arguments`, literal(pythonJsonDumps(args))),
  ];
  if (measures) {
    triples.push(
      ...measures.toolCandidates.map((name) => triple(uri, `${TG}toolCandidate`, literal(name))),
      triple(uri, `${TG}stepNumber`, literal(String(n))),
      triple(uri, `${TG}llmDurationMs`, literal(String(measures.llmDurationMs))),
    );
  }
  triples.push(triple(uri, `${PROV}wasDerivedFrom`, iri(derivedFrom(sessionId, n, firstDerivedFrom))));
  if (thoughtDocumentId !== undefined) {
    const thought = provenanceUris.thought(sessionId, n);
    triples.push(
      triple(uri, `${TG}thought`, iri(thought)),
      triple(thought, RDF_TYPE, iri(`${TG}Reflection`)),
      triple(thought, RDF_TYPE, iri(`${TG}Thought`)),
      triple(thought, RDFS_LABEL, literal('Thought')),
      triple(thought, `${PROV}wasDerivedFrom`, iri(uri)),
      triple(thought, TG_DOCUMENT, iri(thoughtDocumentId)),
    );
  }
  // Usage the prompt service did not report is left out, as TrustGraph does.
  triples.push(
    ...literalIfSet(uri, `${TG}inToken`, measures?.inToken),
    ...literalIfSet(uri, `${TG}outToken`, measures?.outToken),
    ...literalIfSet(uri, `${TG}llmModel`, measures?.model),
  );
  return triples;
}

/**
 * With `documentId` (the observation was saved to the librarian): a fifth triple, `tg:document`. With `measures`
 * (orchestrated iterations): `tg:toolDurationMs`, the derivation from the tool's sub-trace, and on failure `tg:toolError`.
 */
export function observationTriples(sessionId: string, n: number, documentId?: string, measures?: ObservationMeasures): Triple[] {
  const uri = provenanceUris.observation(sessionId, n);
  const toolError = measures?.toolError;
  return [
    triple(uri, RDF_TYPE, iri(`${PROV}Entity`)),
    triple(uri, RDF_TYPE, iri(`${TG}Observation`)),
    triple(uri, RDFS_LABEL, literal('Observation')),
    triple(uri, `${PROV}wasDerivedFrom`, iri(measures?.derivedFrom ?? provenanceUris.iteration(sessionId, n))),
    ...(documentId !== undefined ? [triple(uri, TG_DOCUMENT, iri(documentId))] : []),
    ...(measures ? [triple(uri, `${TG}toolDurationMs`, literal(String(measures.toolDurationMs)))] : []),
    ...(toolError ? [triple(uri, `${TG}toolError`, literal(toolError)), triple(uri, RDF_TYPE, iri(`${TG}Error`))] : []),
  ];
}

/** With `documentId` (the answer was saved to the librarian): a sixth triple, `tg:document`. */
/** `terminationReason`: why the loop stopped (orchestrated conversations, as TrustGraph's orchestrator writes). */
export function conclusionTriples(
  sessionId: string,
  n: number,
  documentId?: string,
  firstDerivedFrom?: string,
  terminationReason?: string,
): Triple[] {
  const uri = provenanceUris.final(sessionId);
  return [
    triple(uri, RDF_TYPE, iri(`${PROV}Entity`)),
    triple(uri, RDF_TYPE, iri(`${TG}Conclusion`)),
    triple(uri, RDF_TYPE, iri(`${TG}Answer`)),
    triple(uri, RDFS_LABEL, literal('Conclusion')),
    triple(uri, `${PROV}wasDerivedFrom`, iri(derivedFrom(sessionId, n, firstDerivedFrom))),
    ...(documentId !== undefined ? [triple(uri, TG_DOCUMENT, iri(documentId))] : []),
    ...(terminationReason !== undefined ? [triple(uri, `${TG}terminationReason`, literal(terminationReason))] : []),
  ];
}
