/**
 * The librarian documents of a conversation, as TrustGraph 2.11.1's ReAct agent saves them
 * (`agent/react/service.py` with `save_document` of trustgraph-base's librarian client): each thought,
 * observation and final answer becomes an `add-document` LibrarianRequest, and the explain triples link the
 * entity to the document (`tg:document`), so TrustGraph's Workbench can show the agent's reasoning.
 *
 * Document ids: a thought's and an observation's document share the entity's URI
 * (`urn:trustgraph:agent:<session>/i<n>/thought`, `…/i<n>/observation`); the answer's is `…/answer` (the
 * conclusion entity is `…/final`). Empty text is not saved.
 */
import { createHash } from 'node:crypto';
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
 * The documents of one conversation, under ids no other conversation shares. TrustGraph names a document after
 * its entity, whose URI carries the client's `session_id`; two conversations that send the same `session_id`
 * would overwrite each other's documents. So each id gets a suffix digested from the conversation's request `id`
 * (the property every message of one conversation carries, fresh per request at TrustGraph's gateway): the
 * entity URIs stay TrustGraph's, the document ids are the conversation's own, and no client text enters them.
 */
export function conversationDocuments(sink: DocumentSink, requestId: string): DocumentSink {
  const tag = createHash('sha256').update(requestId, 'utf8').digest('hex').slice(0, 16);
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
