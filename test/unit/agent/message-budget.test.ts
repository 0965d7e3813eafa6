// Sizing of derived messages: measured with the real encoder (Python ensure_ascii escapes: a 4-byte emoji
// costs 12 bytes), shortened where nothing essential is lost, refused with a remedy where it would be.
import { describe, expect, it } from 'vitest';
import { sessionTriples, sessionUriKey, MAX_SESSION_ID_IN_URI } from '../../../src/agent/explainability.js';
import { MessageTooLargeError } from '../../../src/agent/errors.js';
import { budgetFor, fitResponse, fitTriples, type MessageBudget } from '../../../src/agent/message-budget.js';
import { answerResponse, explainResponse, thoughtResponse } from '../../../src/agent/responses.js';
import { describeFailure } from '../../../src/agent/failure.js';
import { FrameTooLargeError } from '../../../src/bus/errors.js';
import { WebSocketTransport } from '../../../src/bus/pulsar/websocket/websocket-transport.js';
import { agentResponseCodec, makeTriples, triplesCodec } from '../../../src/wire/index.js';

const EMOJI = '\u{1F600}';
const budget = (maxPayloadBytes: number): MessageBudget => ({ maxPayloadBytes, remedy: 'raise the limit' });

function collect(): { warn: (text: string) => void; warnings: string[] } {
  const warnings: string[] = [];
  return { warn: (text) => warnings.push(text), warnings };
}

describe('fitResponse', () => {
  it('sends a response that fits exactly as the codec encodes it, without a warning', () => {
    const response = answerResponse('the answer', 'urn:x/final', { message: true, dialog: true });
    const { warn, warnings } = collect();
    expect(fitResponse(response, budget(10_000), warn).equals(agentResponseCodec.encode(response))).toBe(true);
    expect(warnings).toEqual([]);
  });

  it('measures with the real encoder: 40 000 emoji are 160 KB of UTF-8 but 480 KB encoded', () => {
    const triples = sessionTriples('s', EMOJI.repeat(40_000), new Date(0));
    const response = explainResponse('urn:trustgraph:agent:s', triples);
    expect(Buffer.byteLength(EMOJI.repeat(40_000))).toBe(160_000);
    expect(agentResponseCodec.encode(response).length).toBeGreaterThan(480_000);
    const { warn, warnings } = collect();
    const payload = fitResponse(response, budget(200_000), warn);
    expect(payload.length).toBeLessThanOrEqual(200_000);
    const sent = agentResponseCodec.decode(payload);
    const query = sent.explain_triples.find((t) => t.p?.iri === 'https://trustgraph.ai/ns/query');
    expect(query?.o?.value).toMatch(/characters cut\)$/);
    expect(sent.explain_triples).toHaveLength(triples.length);
    expect(warnings).toEqual([expect.stringMatching(/long literals were cut/)]);
  });

  it('leaves the triples out when even cut they do not fit', () => {
    const response = explainResponse('urn:trustgraph:agent:s', sessionTriples('s', 'q'.repeat(5000), new Date(0)));
    const { warn, warnings } = collect();
    const payload = fitResponse(response, budget(600), warn);
    expect(payload.length).toBeLessThanOrEqual(600);
    expect(agentResponseCodec.decode(payload)).toMatchObject({ message_type: 'explain', explain_triples: [] });
    expect(warnings).toEqual([expect.stringMatching(/triples were left out/)]);
  });

  it('cuts a thought to fit, saying so', () => {
    const response = thoughtResponse(`${EMOJI}x`.repeat(50_000), 'urn:x/i1/thought', true);
    const { warn, warnings } = collect();
    const payload = fitResponse(response, budget(100_000), warn);
    expect(payload.length).toBeLessThanOrEqual(100_000);
    expect(payload.length).toBeGreaterThan(50_000);
    expect(agentResponseCodec.decode(payload).content).toMatch(/… \(cut: too large for one message\)$/);
    expect(warnings).toHaveLength(1);
  });

  it('refuses an answer that does not fit, naming the sizes and the remedy', () => {
    const response = answerResponse('a'.repeat(5000), 'urn:x/final', { message: true, dialog: true });
    const { warn } = collect();
    expect(() => fitResponse(response, budget(1000), warn)).toThrow(MessageTooLargeError);
    expect(() => fitResponse(response, budget(1000), warn)).toThrow(/the answer response is \d+ bytes encoded, over the 1000 bytes one message can carry here; raise the limit/);
  });
});

describe('fitTriples', () => {
  const triples = makeTriples({ metadata: { id: 'urn:x', root: '', collection: 'c' }, triples: sessionTriples('s', 'q'.repeat(50_000), new Date(0)) });

  it('cuts long literals of the explainability message when it does not fit', () => {
    const { warn, warnings } = collect();
    const payload = fitTriples((t) => triplesCodec.encode(t), triples, budget(10_000), warn);
    expect(payload).toBeDefined();
    expect(payload!.length).toBeLessThanOrEqual(10_000);
    expect(warnings).toHaveLength(1);
  });

  it('leaves it out (undefined) when it cannot fit', () => {
    const { warn, warnings } = collect();
    expect(fitTriples((t) => triplesCodec.encode(t), triples, budget(100), warn)).toBeUndefined();
    expect(warnings).toEqual([expect.stringMatching(/were left out/)]);
  });
});

describe('budgetFor', () => {
  it('on WebSocket: the largest payload whose base64 frame fits the text frame limit', () => {
    const transport = new WebSocketTransport({ url: 'ws://127.0.0.1:1', maxFrameBytes: 1_048_576 });
    const properties = { id: 'a-request-id' };
    const { maxPayloadBytes, remedy } = budgetFor(transport, properties);
    const frame = (bytes: number) =>
      Buffer.byteLength(JSON.stringify({ payload: Buffer.alloc(bytes).toString('base64'), properties, context: '9999999999' }));
    expect(frame(maxPayloadBytes)).toBeLessThanOrEqual(1_048_576);
    expect(frame(maxPayloadBytes + 300)).toBeGreaterThan(1_048_576);
    expect(remedy).toMatch(/webSocketMaxTextFrameSize/);
    expect(remedy).toMatch(/--transport native/);
  });

  it('without a limit: Infinity', () => {
    expect(budgetFor({ kind: 'memory' } as never).maxPayloadBytes).toBe(Infinity);
  });
});

describe('sessionUriKey', () => {
  it('percent-encodes a session id that is not URI-safe, so no path, NUL, newline or markup reaches a URI', () => {
    expect(sessionUriKey('3f1c2a9e-0b7d-4e57-9a51-3c0f9e2b1d44')).toBe('3f1c2a9e-0b7d-4e57-9a51-3c0f9e2b1d44');
    const key = sessionUriKey('../../x\u0000y\n<script>/é');
    expect(key).toBe('..%2F..%2Fx%00y%0A%3Cscript%3E%2F%C3%A9');
    expect(key).toMatch(/^[A-Za-z0-9._~%-]+$/);
    expect(sessionUriKey('a\ud800b')).toMatch(/^sha256-[0-9a-f]{64}$/);
    // '%' is encoded too, so an id that looks encoded never meets the id it looks like.
    expect(sessionUriKey('a%20b')).not.toBe(sessionUriKey('a b'));
  });

  it('keeps a session id of ordinary length, as TrustGraph writes it', () => {
    const id = 'f7b3c0de-0000-4000-8000-000000000000';
    expect(sessionUriKey(id)).toBe(id);
    expect(sessionUriKey('x'.repeat(MAX_SESSION_ID_IN_URI))).toBe('x'.repeat(MAX_SESSION_ID_IN_URI));
  });

  it('names a longer one by its digest: bounded, and the same in every iteration', () => {
    const id = EMOJI.repeat(125_000);
    expect(sessionUriKey(id)).toMatch(/^sha256-[0-9a-f]{64}$/);
    expect(sessionUriKey(id)).toBe(sessionUriKey(EMOJI.repeat(125_000)));
    expect(sessionUriKey(`${id}x`)).not.toBe(sessionUriKey(id));
  });
});

describe('describeFailure', () => {
  it('says what really happened, in a bounded text', () => {
    expect(describeFailure(new RangeError('Maximum call stack size exceeded'))).toMatchObject({
      reason: 'too-deep',
      text: expect.stringMatching(/^a value in this conversation is too large or nested too deeply to process/),
    });
    expect(describeFailure(new FrameTooLargeError('t', 2_000_000, 1_048_576, 1_500_000)).reason).toBe('too-large');
    expect(describeFailure(new Error('x'.repeat(100_000))).text.length).toBeLessThan(2100);
  });
});
