/**
 * The 2.11.1 wire, byte for byte: `test/fixtures/trustgraph-2.11.1/messages.json` holds what TrustGraph 2.11.1's
 * own serializer (`json.dumps(dataclass_to_dict(msg))`) writes for every message type the agent sends or reads,
 * once with every default and once populated (regenerate with the `generate.py` beside it). Our codec must write
 * the same bytes (field order, defaults, escaping), and read a 2.8 peer's message (without the 2.11 fields).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  agentRequestCodec,
  agentResponseCodec,
  configPushCodec,
  configRequestCodec,
  configResponseCodec,
  embeddingsRequestCodec,
  embeddingsResponseCodec,
  graphRagQueryCodec,
  graphRagResponseCodec,
  librarianRequestCodec,
  librarianResponseCodec,
  makeGraphRagQuery,
  makeRowEmbeddingsRequest,
  makeTextCompletionRequest,
  promptRequestCodec,
  promptResponseCodec,
  rowEmbeddingsRequestCodec,
  rowEmbeddingsResponseCodec,
  structuredQueryRequestCodec,
  structuredQueryResponseCodec,
  textCompletionRequestCodec,
  textCompletionResponseCodec,
  toolRequestCodec,
  toolResponseCodec,
  toolServiceRequestCodec,
  toolServiceResponseCodec,
  triplesCodec,
  type Codec,
} from '../../../src/wire/index.js';

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`../../fixtures/trustgraph-2.11.1/${name}`, import.meta.url), 'utf8'));

const golden = fixture('messages.json') as Record<string, string[]>;

const codecs: Record<string, Codec<unknown>> = {
  AgentRequest: agentRequestCodec,
  AgentResponse: agentResponseCodec,
  PromptRequest: promptRequestCodec,
  PromptResponse: promptResponseCodec,
  TextCompletionRequest: textCompletionRequestCodec,
  TextCompletionResponse: textCompletionResponseCodec,
  GraphRagQuery: graphRagQueryCodec,
  GraphRagResponse: graphRagResponseCodec,
  ToolRequest: toolRequestCodec,
  ToolResponse: toolResponseCodec,
  StructuredQueryRequest: structuredQueryRequestCodec,
  StructuredQueryResponse: structuredQueryResponseCodec,
  EmbeddingsRequest: embeddingsRequestCodec,
  EmbeddingsResponse: embeddingsResponseCodec,
  RowEmbeddingsRequest: rowEmbeddingsRequestCodec,
  RowEmbeddingsResponse: rowEmbeddingsResponseCodec,
  ToolServiceRequest: toolServiceRequestCodec,
  ToolServiceResponse: toolServiceResponseCodec,
  Triples: triplesCodec,
  LibrarianRequest: librarianRequestCodec,
  LibrarianResponse: librarianResponseCodec,
  ConfigRequest: configRequestCodec,
  ConfigResponse: configResponseCodec,
  ConfigPush: configPushCodec,
};

/** Fields TrustGraph added between 2.8.11 and 2.11.1, per message (a 2.8 peer sends none of them). */
const ADDED_IN_2_11: Record<string, string[]> = {
  GraphRagQuery: ['user_context', 'grounding_seeds', 'graph_seeds', 'languages', 'traversal_instructions', 'graph'],
  TextCompletionRequest: ['operation'],
  TextCompletionResponse: ['models'],
  RowEmbeddingsRequest: ['attributes'],
};

describe('every message type, against TrustGraph 2.11.1 serialization', () => {
  it('covers every message the fixture holds', () => {
    expect(Object.keys(codecs).sort()).toEqual(Object.keys(golden).sort());
  });

  it('LibrarianResponse: a TrustGraph reply reads (the agent models only what it uses: error, document_id, object_id)', () => {
    for (const payload of golden.LibrarianResponse ?? []) {
      const full = JSON.parse(payload) as Record<string, unknown>;
      expect(librarianResponseCodec.decode(payload)).toEqual({
        error: full.error,
        document_id: full.document_id,
        object_id: full.object_id,
      });
    }
  });

  for (const [name, payloads] of Object.entries(golden)) {
    const codec = codecs[name];
    if (!codec || name === 'LibrarianResponse') continue;
    it(`${name}: the all-defaults message is written exactly as TrustGraph writes it`, () => {
      const [defaults] = payloads;
      expect(codec.encode(codec.decode('{}')).toString('utf8')).toBe(defaults);
    });
    it(`${name}: a TrustGraph message reads and writes back byte for byte`, () => {
      for (const payload of payloads) expect(codec.encode(codec.decode(payload)).toString('utf8')).toBe(payload);
    });
  }
});

describe('2.8 peers', () => {
  for (const [name, added] of Object.entries(ADDED_IN_2_11)) {
    it(`${name}: a message without the 2.11 fields (${added.join(', ')}) is accepted and gets their defaults`, () => {
      const codec = codecs[name];
      if (!codec) throw new Error(`no codec for ${name}`);
      const [defaults = '', populated = ''] = golden[name] ?? [];
      const full = JSON.parse(populated) as Record<string, unknown>;
      const old = Object.fromEntries(Object.entries(full).filter(([key]) => !added.includes(key)));
      expect(Object.keys(old).length).toBe(Object.keys(full).length - added.length);
      const decoded = codec.decode(JSON.stringify(old)) as Record<string, unknown>;
      const defaultsObject = JSON.parse(defaults) as Record<string, unknown>;
      for (const key of added) expect(decoded[key]).toEqual(defaultsObject[key]);
      for (const key of Object.keys(old)) expect(decoded[key]).toEqual(full[key]);
    });
  }
});

describe('what the agent sends carries every 2.11 field', () => {
  const keys = (payload: string | undefined) => Object.keys(JSON.parse(payload ?? '{}') as object);
  it('GraphRagQuery', () => {
    const sent = graphRagQueryCodec.encode(makeGraphRagQuery({ query: 'q', collection: 'c' })).toString('utf8');
    expect(keys(sent)).toEqual(keys(golden.GraphRagQuery?.[0]));
    for (const field of ADDED_IN_2_11.GraphRagQuery ?? []) expect(keys(sent)).toContain(field);
  });
  it('TextCompletionRequest', () => {
    const sent = textCompletionRequestCodec.encode(makeTextCompletionRequest({ prompt: 'p' })).toString('utf8');
    expect(JSON.parse(sent)).toMatchObject({ operation: 'completion' });
    expect(keys(sent)).toEqual(keys(golden.TextCompletionRequest?.[0]));
  });
  it('RowEmbeddingsRequest', () => {
    const sent = rowEmbeddingsRequestCodec.encode(makeRowEmbeddingsRequest({ vector: [0.5] })).toString('utf8');
    expect(keys(sent)).toEqual(keys(golden.RowEmbeddingsRequest?.[0]));
  });
});
