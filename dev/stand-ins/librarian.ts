/**
 * TrustGraph's librarian (trustgraph-flow `librarian/`), the part the agent uses: `add-document` stores the
 * document (metadata + base64 content) and answers with an all-defaults LibrarianResponse; a document id that
 * exists already, or a request without `document_metadata.kind`, is answered with the error the real service
 * gives (`unexpected-error` "Document already exists", `request-error` "Document kind (MIME type) is required").
 * Replies carry every LibrarianResponse field, exactly as TrustGraph 2.11.1 serializes them.
 *
 * `answer` may replace the behaviour per request: `'ok'`, an error record, or `'silent'` (no reply, as a
 * librarian that is down).
 */
import type { Transport } from '../../src/bus/transport.js';
import {
  librarianRequestCodec,
  librarianResponseCodec,
  pythonJsonDumps,
  type DocumentMetadata,
  type ErrorRecord,
  type LibrarianRequest,
  type LibrarianResponse,
} from '../../src/wire/index.js';
import { scriptedHandle, startStandIn, type ServiceStandIn } from './service-stand-in.js';

export interface StoredDocument {
  readonly metadata: DocumentMetadata;
  /** The content, decoded from base64 as UTF-8 text. */
  readonly text: string;
}

export type LibrarianAnswer = (request: LibrarianRequest) => 'ok' | 'silent' | ErrorRecord;

export interface LibrarianStandIn {
  readonly bus: ServiceStandIn<LibrarianRequest, LibrarianResponse>;
  readonly calls: LibrarianRequest[];
  /** Stored documents by id. */
  readonly documents: Map<string, StoredDocument>;
  answer: LibrarianAnswer;
  stop(): Promise<void>;
}

/** TrustGraph's LibrarianResponse with every field, in dataclass order (`error` as given). */
export function librarianResponse(error: ErrorRecord | null): string {
  return pythonJsonDumps({
    error,
    document_metadata: null,
    content: '',
    document_metadatas: [],
    processing_metadatas: [],
    upload_id: '',
    chunk_size: 0,
    total_chunks: 0,
    chunk_index: 0,
    chunks_received: 0,
    bytes_received: 0,
    total_bytes: 0,
    document_id: '',
    object_id: '',
    upload_state: '',
    received_chunks: [],
    missing_chunks: [],
    upload_sessions: [],
    is_final: true,
  });
}

export async function startLibrarian(options: {
  transport: Transport;
  requestQueue: string;
  responseQueue: string;
  answer?: LibrarianAnswer;
}): Promise<LibrarianStandIn> {
  const documents = new Map<string, StoredDocument>();
  const state: { answer: LibrarianAnswer } = { answer: options.answer ?? (() => 'ok') };
  const store = (request: LibrarianRequest): ErrorRecord | null => {
    if (request.operation !== 'add-document') {
      return { type: 'request-error', message: `Invalid operation: ${request.operation}` };
    }
    const metadata = request.document_metadata;
    if (!metadata?.kind) return { type: 'request-error', message: 'Document kind (MIME type) is required' };
    if (documents.has(metadata.id)) return { type: 'unexpected-error', message: 'Document already exists' };
    documents.set(metadata.id, { metadata, text: Buffer.from(request.content, 'base64').toString('utf8') });
    return null;
  };
  const bus = await startStandIn<LibrarianRequest, LibrarianResponse>({
    transport: options.transport,
    requestQueue: options.requestQueue,
    responseQueue: options.responseQueue,
    requestCodec: librarianRequestCodec,
    responseCodec: librarianResponseCodec,
    name: 'librarian',
    async handle(request, ctx) {
      const decision = state.answer(request);
      if (decision === 'silent') return [];
      await ctx.sendRaw(librarianResponse(decision === 'ok' ? store(request) : decision));
      return [];
    },
  });
  return scriptedHandle(bus, state, { bus, calls: bus.calls, documents });
}
