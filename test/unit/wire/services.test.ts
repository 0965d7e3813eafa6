import { InvalidUseError } from '../../../src/errors/index.js';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  embeddingsRequestCodec,
  embeddingsResponseCodec,
  graphRagQueryCodec,
  graphRagResponseCodec,
  iriTerm,
  librarianRequestCodec,
  librarianResponseCodec,
  literalTerm,
  makeEmbeddingsRequest,
  makeEmbeddingsResponse,
  makeGraphRagQuery,
  makeGraphRagResponse,
  makeLibrarianRequest,
  makeLibrarianResponse,
  makePromptRequest,
  makePromptResponse,
  makeRowEmbeddingsRequest,
  makeRowEmbeddingsResponse,
  makeStructuredQueryRequest,
  makeStructuredQueryResponse,
  makeTerm,
  makeTextCompletionRequest,
  makeTextCompletionResponse,
  makeToolRequest,
  makeToolResponse,
  makeToolServiceRequest,
  makeToolServiceResponse,
  makeTriple,
  makeTriples,
  promptRequestCodec,
  promptResponseCodec,
  pythonJsonDumps,
  rowEmbeddingsRequestCodec,
  rowEmbeddingsResponseCodec,
  structuredQueryRequestCodec,
  structuredQueryResponseCodec,
  termCodec,
  textCompletionRequestCodec,
  textCompletionResponseCodec,
  toolRequestCodec,
  toolResponseCodec,
  toolServiceRequestCodec,
  toolServiceResponseCodec,
  tripleCodec,
  triplesCodec,
  type Codec,
} from '../../../src/wire/index.js';

const keysOf = (buffer: Buffer): string[] => Object.keys(JSON.parse(buffer.toString('utf8')) as object);

/** TrustGraph 2.11.1's all-defaults message (see trustgraph-2-11.test.ts) and its keys. */
const golden = JSON.parse(
  readFileSync(new URL('../../fixtures/trustgraph-2.11.1/messages.json', import.meta.url), 'utf8'),
) as Record<string, string[]>;
const tgDefaults = (name: string): Record<string, unknown> => JSON.parse(golden[name]?.[0] ?? '{}') as Record<string, unknown>;
const tgKeys = (name: string): string[] => Object.keys(tgDefaults(name));

interface Case {
  name: string;
  codec: Codec<unknown>;
  /** The encoding of the all-defaults message. */
  defaults: unknown;
  /** Keys in dataclass order. */
  keys: string[];
  full: unknown;
  make: () => unknown;
}

const err = { type: 'x-error', message: 'boom' };
const triple = makeTriple({ s: iriTerm('urn:s'), p: iriTerm('urn:p'), o: literalTerm('5', { datatype: 'xsd:int' }), g: 'urn:graph:retrieval' });

const cases: Case[] = [
  {
    name: 'PromptRequest',
    codec: promptRequestCodec as Codec<unknown>,
    make: () => makePromptRequest(),
    defaults: { id: '', terms: {}, streaming: false },
    keys: ['id', 'terms', 'streaming'],
    full: makePromptRequest({ id: 'agent-react', terms: { question: pythonJsonDumps('Q é'), tools: pythonJsonDumps([{ name: 't' }]) }, streaming: true }),
  },
  {
    name: 'PromptResponse',
    codec: promptResponseCodec as Codec<unknown>,
    make: () => makePromptResponse(),
    defaults: { error: null, text: '', object: '', end_of_stream: false, in_token: null, out_token: null, model: null },
    keys: ['error', 'text', 'object', 'end_of_stream', 'in_token', 'out_token', 'model'],
    full: makePromptResponse({ error: err, text: 't', object: '{"a": 1}', end_of_stream: true, in_token: 1, out_token: 2, model: 'm' }),
  },
  {
    name: 'TextCompletionRequest',
    codec: textCompletionRequestCodec as Codec<unknown>,
    make: () => makeTextCompletionRequest(),
    defaults: tgDefaults('TextCompletionRequest'),
    keys: tgKeys('TextCompletionRequest'),
    full: makeTextCompletionRequest({ system: 's', prompt: 'p', streaming: true, response_format: 'json', schema: { type: 'object', properties: { a: { type: 'string' } } } }),
  },
  {
    name: 'TextCompletionResponse',
    codec: textCompletionResponseCodec as Codec<unknown>,
    make: () => makeTextCompletionResponse(),
    defaults: tgDefaults('TextCompletionResponse'),
    keys: tgKeys('TextCompletionResponse'),
    full: makeTextCompletionResponse({ error: err, response: 'r', in_token: 3, out_token: 4, model: 'm', end_of_stream: true }),
  },
  {
    name: 'GraphRagQuery',
    codec: graphRagQueryCodec as Codec<unknown>,
    make: () => makeGraphRagQuery(),
    defaults: tgDefaults('GraphRagQuery'),
    keys: tgKeys('GraphRagQuery'),
    full: makeGraphRagQuery({
      query: 'q', collection: 'c', entity_limit: 1, triple_limit: 2, max_subgraph_size: 3, max_path_length: 4,
      edge_score_limit: 5, edge_limit: 6, max_reranker_input: 7, streaming: true, parent_uri: 'urn:p',
    }),
  },
  {
    name: 'GraphRagResponse',
    codec: graphRagResponseCodec as Codec<unknown>,
    make: () => makeGraphRagResponse(),
    defaults: {
      error: null, response: '', end_of_stream: false, explain_id: null, explain_graph: null, explain_triples: [],
      message_type: '', end_of_session: false, in_token: null, out_token: null, model: null, sources: [],
    },
    keys: [
      'error', 'response', 'end_of_stream', 'explain_id', 'explain_graph', 'explain_triples', 'message_type',
      'end_of_session', 'in_token', 'out_token', 'model', 'sources',
    ],
    full: makeGraphRagResponse({
      response: 'answer', end_of_stream: true, explain_id: 'urn:e', explain_graph: 'urn:graph:retrieval', explain_triples: [triple],
      message_type: 'chunk', end_of_session: true, in_token: 1, out_token: 2, model: 'm', sources: [{ uri: 'urn:doc', title: 'Doc' }],
    }),
  },
  {
    name: 'ToolRequest',
    codec: toolRequestCodec as Codec<unknown>,
    make: () => makeToolRequest(),
    defaults: { name: '', parameters: '' },
    keys: ['name', 'parameters'],
    full: makeToolRequest({ name: 'weather', parameters: pythonJsonDumps({ city: 'Zürich' }) }),
  },
  {
    name: 'ToolResponse',
    codec: toolResponseCodec as Codec<unknown>,
    make: () => makeToolResponse(),
    defaults: { error: null, text: '', object: '' },
    keys: ['error', 'text', 'object'],
    full: makeToolResponse({ error: err, text: 't', object: '{}' }),
  },
  {
    name: 'StructuredQueryRequest',
    codec: structuredQueryRequestCodec as Codec<unknown>,
    make: () => makeStructuredQueryRequest(),
    defaults: { question: '', collection: '' },
    keys: ['question', 'collection'],
    full: makeStructuredQueryRequest({ question: 'how many?', collection: 'c' }),
  },
  {
    name: 'StructuredQueryResponse',
    codec: structuredQueryResponseCodec as Codec<unknown>,
    make: () => makeStructuredQueryResponse(),
    defaults: { error: null, data: '', errors: [] },
    keys: ['error', 'data', 'errors'],
    full: makeStructuredQueryResponse({ data: '{"rows": []}', errors: ['e1', 'e2'] }),
  },
  {
    name: 'EmbeddingsRequest',
    codec: embeddingsRequestCodec as Codec<unknown>,
    make: () => makeEmbeddingsRequest(),
    defaults: { texts: [] },
    keys: ['texts'],
    full: makeEmbeddingsRequest({ texts: ['a', 'b'] }),
  },
  {
    name: 'EmbeddingsResponse',
    codec: embeddingsResponseCodec as Codec<unknown>,
    make: () => makeEmbeddingsResponse(),
    defaults: { error: null, vectors: [] },
    keys: ['error', 'vectors'],
    full: makeEmbeddingsResponse({ vectors: [[0.1, -0.25, 1e-7], [0, 1]] }),
  },
  {
    name: 'RowEmbeddingsRequest',
    codec: rowEmbeddingsRequestCodec as Codec<unknown>,
    make: () => makeRowEmbeddingsRequest(),
    defaults: tgDefaults('RowEmbeddingsRequest'),
    keys: tgKeys('RowEmbeddingsRequest'),
    full: makeRowEmbeddingsRequest({ vector: [0.5, 0.25], limit: 3, collection: 'c', schema_name: 'customers', index_name: 'name' }),
  },
  {
    name: 'RowEmbeddingsResponse',
    codec: rowEmbeddingsResponseCodec as Codec<unknown>,
    make: () => makeRowEmbeddingsResponse(),
    defaults: { error: null, matches: [] },
    keys: ['error', 'matches'],
    full: makeRowEmbeddingsResponse({ matches: [{ index_name: 'name', index_value: ['Ada'], text: 'Ada', score: 0.93 }] }),
  },
  {
    name: 'ToolServiceRequest',
    codec: toolServiceRequestCodec as Codec<unknown>,
    make: () => makeToolServiceRequest(),
    defaults: { config: '', arguments: '' },
    keys: ['config', 'arguments'],
    full: makeToolServiceRequest({ config: '{"collection": "c"}', arguments: '{"joke": "cats"}' }),
  },
  {
    name: 'ToolServiceResponse',
    codec: toolServiceResponseCodec as Codec<unknown>,
    make: () => makeToolServiceResponse(),
    defaults: { error: null, response: '', end_of_stream: false },
    keys: ['error', 'response', 'end_of_stream'],
    full: makeToolServiceResponse({ response: 'ha', end_of_stream: true }),
  },
  {
    name: 'Triples',
    codec: triplesCodec as Codec<unknown>,
    make: () => makeTriples(),
    defaults: tgDefaults('Triples'),
    keys: tgKeys('Triples'),
    full: makeTriples({ metadata: { id: 'urn:trustgraph:agent:s1', collection: 'default' }, triples: [triple] }),
  },
  {
    name: 'LibrarianRequest',
    codec: librarianRequestCodec as Codec<unknown>,
    make: () => makeLibrarianRequest(),
    defaults: {
      operation: '', document_id: '', processing_id: '', document_metadata: null, processing_metadata: null, content: '',
      collection: '', criteria: [], total_size: 0, chunk_size: 0, upload_id: '', chunk_index: 0, include_children: false,
    },
    keys: [
      'operation', 'document_id', 'processing_id', 'document_metadata', 'processing_metadata', 'content', 'collection',
      'criteria', 'total_size', 'chunk_size', 'upload_id', 'chunk_index', 'include_children',
    ],
    full: makeLibrarianRequest({
      operation: 'add-document',
      document_id: 'urn:trustgraph:agent:s1/i1/thought',
      document_metadata: { id: 'urn:trustgraph:agent:s1/i1/thought', time: 1700000000, kind: 'text/plain', title: 'Agent Thought: search', document_type: 'answer' },
      content: Buffer.from('I should search').toString('base64'),
    }),
  },
  {
    name: 'LibrarianResponse',
    codec: librarianResponseCodec as Codec<unknown>,
    make: () => makeLibrarianResponse(),
    defaults: { error: null, document_id: '', object_id: '' },
    keys: ['error', 'document_id', 'object_id'],
    full: makeLibrarianResponse({ error: err }),
  },
  {
    name: 'Term',
    codec: termCodec as Codec<unknown>,
    make: () => makeTerm(),
    defaults: { type: '', iri: '', id: '', value: '', datatype: '', language: '', triple: null },
    keys: ['type', 'iri', 'id', 'value', 'datatype', 'language', 'triple'],
    full: makeTerm({ type: 't', triple }),
  },
  {
    name: 'Triple',
    codec: tripleCodec as Codec<unknown>,
    make: () => makeTriple(),
    defaults: { s: null, p: null, o: null, g: null },
    keys: ['s', 'p', 'o', 'g'],
    full: triple,
  },
];

describe.each(cases)('$name', ({ name, codec, make, defaults, keys, full }) => {
  it('has the TrustGraph schema name', () => {
    expect(codec.name).toBe(name);
  });

  it('encodes the all-defaults message with every field, in dataclass order', () => {
    const encoded = codec.encode(make());
    expect(JSON.parse(encoded.toString('utf8'))).toEqual(defaults);
    expect(keysOf(encoded)).toEqual(keys);
  });

  it('decodes {} to the defaults', () => {
    expect(codec.decode('{}')).toEqual(defaults);
  });

  it('decodes all-null fields to the defaults', () => {
    const nulls = Object.fromEntries(keys.map((k) => [k, null]));
    const decoded = codec.decode(JSON.stringify({ ...nulls, unknown_field: { x: 1 } })) as Record<string, unknown>;
    expect(decoded).toEqual(defaults);
  });

  it('round-trips a full message', () => {
    const encoded = codec.encode(full);
    expect(keysOf(encoded)).toEqual(keys);
    expect(codec.decode(encoded)).toEqual(full);
    expect(codec.encode(codec.decode(encoded)).equals(encoded)).toBe(true);
  });
});

describe('service specifics', () => {
  it('null text / object / response read as empty strings', () => {
    expect(promptResponseCodec.decode('{"text": null, "object": null, "end_of_stream": true}')).toMatchObject({ text: '', object: '' });
    expect(toolResponseCodec.decode('{"text": null, "object": "{\\"a\\": 1}"}')).toMatchObject({ text: '', object: '{"a": 1}' });
    expect(textCompletionResponseCodec.decode('{"response": null}').response).toBe('');
  });

  it('the librarian response ignores every reply field it does not model', () => {
    const response = librarianResponseCodec.decode(
      '{"error": null, "document_metadata": {"weird": [1]}, "document_metadatas": 5, "upload_sessions": "x", "document_id": "d"}',
    );
    expect(response).toEqual({ error: null, document_id: 'd', object_id: '' });
  });

  it('embedding vectors must be numbers', () => {
    expect(() => embeddingsResponseCodec.decode('{"vectors": [[0.1, "x"]]}')).toThrow('field "vectors[0][1]": expected number, got string');
  });

  it('TextCompletionRequest.schema must be an object', () => {
    expect(() => textCompletionRequestCodec.decode('{"schema": "x"}')).toThrow('field "schema": expected object, got string');
  });

  it('make helpers reject wrong runtime types with an InvalidUseError naming the field', () => {
    expect(() => makeToolRequest({ name: 5 as unknown as string })).toThrow(InvalidUseError);
    expect(() => makeToolRequest({ name: 5 as unknown as string })).toThrow('Cannot make ToolRequest: field "name": expected string, got number');
    expect(() => toolRequestCodec.encode({ name: 5 } as never)).toThrow('Cannot encode ToolRequest');
  });
});
