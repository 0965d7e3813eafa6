/**
 * The librarian documents of a conversation, as TrustGraph 2.11.1's ReAct agent saves them
 * (`agent/react/service.py` with `save_document` of trustgraph-base's librarian client): each thought,
 * observation and final answer becomes an `add-document` LibrarianRequest, and the explain triples link the
 * entity to the document (`tg:document`), so TrustGraph's Workbench can show the agent's reasoning.
 *
 * Document ids: a thought's and an observation's document start with the entity's URI
 * (`urn:trustgraph:agent:<session>/i<n>/thought`, `…/i<n>/observation`); the answer's with `…/answer` (the
 * conclusion entity is `…/final`); each ends with a random suffix (`conversationDocuments`). Empty text is not saved.
 */
import { randomBytes } from 'node:crypto';
import { documentMetadataOf, librarianRequestOf, type LibrarianRequest } from '../wire/index.js';
import { provenanceUris } from './explainability.js';

export interface AgentDocument {
  /** The document id (an IRI), also `document_metadata.id`. */
  readonly id: string;
  readonly title: string;
  /** Plain text. */
  readonly content: string;
}

/** Saves documents without making the caller wait; see src/flow/document-saver.ts. */
export interface DocumentSink {
  /**
   * Start saving `document`. The id it is saved under when the save was started (the caller links that id),
   * undefined when it was not (too many saves in flight): the caller then leaves the link out, as TrustGraph does
   * when a save fails.
   */
  save(document: AgentDocument): string | undefined;
}

/**
 * The documents of one iteration, under ids nobody else can foresee. TrustGraph names a document after its entity,
 * whose URI carries the client's `session_id`: anyone who reads the request topic could write a conversation's
 * documents first, or send a request with the same `id` and `session_id` and have the agent overwrite them. So each
 * id gets a suffix of 64 random bits, drawn per iteration here and published nowhere before the explain triples
 * link the entity to its document: the entity URIs stay TrustGraph's, explain clients follow the `tg:document`
 * links as they do TrustGraph's, and no client text or wire value enters the suffix.
 */
export function conversationDocuments(sink: DocumentSink): DocumentSink {
  const tag = randomBytes(8).toString('hex');
  return { save: (document) => sink.save({ ...document, id: `${document.id}/c-${tag}` }) };
}

export const agentDocuments = {
  thought: (sessionId: string, n: number, action: string, content: string): AgentDocument => ({
    id: provenanceUris.thought(sessionId, n),
    title: `Agent Thought: ${action}`,
    content,
  }),
  observation: (sessionId: string, n: number, content: string): AgentDocument => ({
    id: provenanceUris.observation(sessionId, n),
    title: 'Agent Observation',
    content,
  }),
  answer: (sessionId: string, question: string, content: string): AgentDocument => ({
    id: `urn:trustgraph:agent:${sessionId}/answer`,
    // Python's question[:50]: the first 50 code points, not UTF-16 units.
    title: `Agent Answer: ${Array.from(question).slice(0, 50).join('')}...`,
    content,
  }),
};

/** The `add-document` request `save_document` sends: text/plain, `document_type` "answer", content base64. */
export function addDocumentRequest(document: AgentDocument): LibrarianRequest {
  return librarianRequestOf({
    operation: 'add-document',
    document_id: document.id,
    document_metadata: documentMetadataOf({
      id: document.id,
      kind: 'text/plain',
      title: document.title || document.id,
      document_type: 'answer',
    }),
    content: Buffer.from(document.content, 'utf8').toString('base64'),
  });
}
