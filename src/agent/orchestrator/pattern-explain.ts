/**
 * The explain entities of the orchestrator's patterns, as TrustGraph 2.11.1's provenance module builds them:
 * the meta-router's pattern decision, a plan and its step results, a supervisor's decomposition and findings,
 * and the synthesis that ends plan-then-execute and supervisor conversations. All in `urn:graph:retrieval`;
 * `sessionId` is the conversation's `sessionUriKey`.
 */
import { iriTerm, literalTerm, type Term, type Triple } from '../../wire/index.js';
import { RETRIEVAL_GRAPH } from '../explainability.js';

const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const RDFS_LABEL = 'http://www.w3.org/2000/01/rdf-schema#label';
const PROV_ENTITY = 'http://www.w3.org/ns/prov#Entity';
const DERIVED_FROM = 'http://www.w3.org/ns/prov#wasDerivedFrom';
const TG = 'https://trustgraph.ai/ns/';

const triple = (s: string, p: string, o: Term): Triple => ({ s: iriTerm(s), p: iriTerm(p), o, g: RETRIEVAL_GRAPH });
const lit = (value: string): Term => literalTerm(value);
const iri = iriTerm;

const base = (sessionId: string) => `urn:trustgraph:agent:${sessionId}`;

export const patternUris = {
  patternDecision: (sessionId: string) => `${base(sessionId)}/pattern-decision`,
  plan: (sessionId: string) => `${base(sessionId)}/plan`,
  /** A refused plan (no ordinal of TrustGraph's own: our addition, beside the plan's). */
  planRefusal: (sessionId: string, attempt: number) => `${base(sessionId)}/plan/refusal/${attempt}`,
  stepResult: (sessionId: string, index: number) => `${base(sessionId)}/step/${index}`,
  decomposition: (sessionId: string) => `${base(sessionId)}/decompose`,
  finding: (sessionId: string, index: number) => `${base(sessionId)}/finding/${index}`,
  synthesis: (sessionId: string) => `${base(sessionId)}/synthesis`,
};

/** Librarian document ids of the orchestrator's entities. */
export const patternDocumentIds = {
  stepResult: (sessionId: string, index: number) => `${base(sessionId)}/step/${index}/doc`,
  finding: (sessionId: string, index: number) => `${base(sessionId)}/finding/${index}/doc`,
  synthesis: (sessionId: string) => `${base(sessionId)}/synthesis/doc`,
};

export function patternDecisionTriples(sessionId: string, sessionUri: string, pattern: string, taskType: string): Triple[] {
  const uri = patternUris.patternDecision(sessionId);
  return [
    triple(uri, RDF_TYPE, iri(PROV_ENTITY)),
    triple(uri, RDF_TYPE, iri(`${TG}PatternDecision`)),
    triple(uri, RDFS_LABEL, lit(`Pattern: ${pattern}`)),
    triple(uri, `${TG}pattern`, lit(pattern)),
    triple(uri, DERIVED_FROM, iri(sessionUri)),
    ...(taskType ? [triple(uri, `${TG}taskType`, lit(taskType))] : []),
  ];
}

export function planTriples(sessionId: string, derivedFrom: string, goals: readonly string[]): Triple[] {
  const uri = patternUris.plan(sessionId);
  return [
    triple(uri, RDF_TYPE, iri(PROV_ENTITY)),
    triple(uri, RDF_TYPE, iri(`${TG}Plan`)),
    triple(uri, RDFS_LABEL, lit(`Plan with ${goals.length} steps`)),
    triple(uri, DERIVED_FROM, iri(derivedFrom)),
    ...goals.map((goal) => triple(uri, `${TG}planStep`, lit(goal))),
  ];
}

/**
 * A plan refused before it ran (a step names a tool the conversation's groups or states do not offer): an
 * observation of the refusal, as a refused ReAct action is observed, derived from where the plan would have.
 */
export function planRefusalTriples(sessionId: string, attempt: number, derivedFrom: string, refusal: string): Triple[] {
  const uri = patternUris.planRefusal(sessionId, attempt);
  return [
    triple(uri, RDF_TYPE, iri(PROV_ENTITY)),
    triple(uri, RDF_TYPE, iri(`${TG}Observation`)),
    triple(uri, RDFS_LABEL, lit('Plan refused')),
    triple(uri, `${TG}refusal`, lit(refusal)),
    triple(uri, DERIVED_FROM, iri(derivedFrom)),
  ];
}

export function stepResultTriples(sessionId: string, index: number, goal: string, documentId?: string): Triple[] {
  const uri = patternUris.stepResult(sessionId, index);
  return [
    triple(uri, RDF_TYPE, iri(PROV_ENTITY)),
    triple(uri, RDF_TYPE, iri(`${TG}StepResult`)),
    triple(uri, RDF_TYPE, iri(`${TG}Answer`)),
    triple(uri, RDFS_LABEL, lit(`Step result: ${goal.slice(0, 60)}`)),
    triple(uri, DERIVED_FROM, iri(patternUris.plan(sessionId))),
    triple(uri, `${TG}planStep`, lit(goal)),
    ...(documentId !== undefined ? [triple(uri, `${TG}document`, iri(documentId))] : []),
  ];
}

export function decompositionTriples(sessionId: string, derivedFrom: string, goals: readonly string[]): Triple[] {
  const uri = patternUris.decomposition(sessionId);
  return [
    triple(uri, RDF_TYPE, iri(PROV_ENTITY)),
    triple(uri, RDF_TYPE, iri(`${TG}Decomposition`)),
    triple(uri, RDFS_LABEL, lit(`Decomposed into ${goals.length} research threads`)),
    triple(uri, DERIVED_FROM, iri(derivedFrom)),
    ...goals.map((goal) => triple(uri, `${TG}subagentGoal`, lit(goal))),
  ];
}

export function findingTriples(sessionId: string, index: number, derivedFrom: string, goal: string, documentId?: string): Triple[] {
  const uri = patternUris.finding(sessionId, index);
  return [
    triple(uri, RDF_TYPE, iri(PROV_ENTITY)),
    triple(uri, RDF_TYPE, iri(`${TG}Finding`)),
    triple(uri, RDF_TYPE, iri(`${TG}Answer`)),
    triple(uri, RDFS_LABEL, lit(`Finding: ${goal.slice(0, 60)}`)),
    triple(uri, DERIVED_FROM, iri(derivedFrom)),
    triple(uri, `${TG}subagentGoal`, lit(goal)),
    ...(documentId !== undefined ? [triple(uri, `${TG}document`, iri(documentId))] : []),
  ];
}

export function synthesisTriples(
  sessionId: string,
  derivedFrom: readonly string[],
  terminationReason: string,
  documentId?: string,
): Triple[] {
  const uri = patternUris.synthesis(sessionId);
  return [
    triple(uri, RDF_TYPE, iri(PROV_ENTITY)),
    triple(uri, RDF_TYPE, iri(`${TG}Synthesis`)),
    triple(uri, RDF_TYPE, iri(`${TG}Answer`)),
    triple(uri, RDFS_LABEL, lit('Synthesis')),
    ...derivedFrom.map((prev) => triple(uri, DERIVED_FROM, iri(prev))),
    ...(documentId !== undefined ? [triple(uri, `${TG}document`, iri(documentId))] : []),
    triple(uri, `${TG}terminationReason`, lit(terminationReason)),
  ];
}
