/**
 * `trustgraph-base/trustgraph/schema/documents.py` (TrustGraph 2.11.1): the subset of the librarian protocol the agent uses
 * (`add-document` of thought / observation / answer documents, as `save_document` writes them). The request carries the dataclass fields in order
 * (without the pre-workspace `user` fields); the response schema keeps only what the agent reads, so any other
 * librarian reply fields are ignored rather than validated.
 */
import { z } from 'zod';
import { TripleSchema, errorField } from './primitives.js';
import { bool, defineMessage, list, num, optRecord, str } from './schema-kit.js';

export const DocumentMetadataSchema = z.object({
  id: str(),
  /** Unix time, seconds. */
  time: num(),
  /** MIME type, e.g. `text/plain`. */
  kind: str(),
  title: str(),
  comments: str(),
  metadata: list(TripleSchema),
  tags: list(z.string()),
  parent_id: str(),
  /** `source`, `extracted`; the agent writes `answer`. */
  document_type: str('source'),
});
export type DocumentMetadata = z.output<typeof DocumentMetadataSchema>;
export type DocumentMetadataInput = z.input<typeof DocumentMetadataSchema>;

export const ProcessingMetadataSchema = z.object({
  id: str(),
  document_id: str(),
  time: num(),
  flow: str(),
  collection: str(),
  tags: list(z.string()),
});
export type ProcessingMetadata = z.output<typeof ProcessingMetadataSchema>;

export const CriteriaSchema = z.object({
  key: str(),
  value: str(),
  operator: str(),
});
export type Criteria = z.output<typeof CriteriaSchema>;

export const LibrarianRequestSchema = z.object({
  /** e.g. `add-document`. */
  operation: str(),
  document_id: str(),
  processing_id: str(),
  document_metadata: optRecord(DocumentMetadataSchema),
  processing_metadata: optRecord(ProcessingMetadataSchema),
  /** Document content, base64-encoded text. */
  content: str(),
  collection: str(),
  criteria: list(CriteriaSchema),
  total_size: num(),
  chunk_size: num(),
  upload_id: str(),
  chunk_index: num(),
  include_children: bool(),
});
export type LibrarianRequest = z.output<typeof LibrarianRequestSchema>;
export type LibrarianRequestInput = z.input<typeof LibrarianRequestSchema>;

export const LibrarianResponseSchema = z.object({
  error: errorField(),
  document_id: str(),
  object_id: str(),
});
export type LibrarianResponse = z.output<typeof LibrarianResponseSchema>;
export type LibrarianResponseInput = z.input<typeof LibrarianResponseSchema>;

const librarianRequest = defineMessage('LibrarianRequest', LibrarianRequestSchema);
const librarianResponse = defineMessage('LibrarianResponse', LibrarianResponseSchema);
const documentMetadata = defineMessage('DocumentMetadata', DocumentMetadataSchema);

export const librarianRequestCodec = librarianRequest.codec;
export const librarianResponseCodec = librarianResponse.codec;
export const makeLibrarianRequest = librarianRequest.make;
/** A LibrarianRequest from fields in their output form (`document_metadata` from `documentMetadataOf`), without running zod. */
export const librarianRequestOf = librarianRequest.of;
export const makeLibrarianResponse = librarianResponse.make;
export const makeDocumentMetadata = documentMetadata.make;
/** DocumentMetadata from fields in their output form, without running zod. */
export const documentMetadataOf = documentMetadata.of;
