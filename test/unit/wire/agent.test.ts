import { describe, expect, it } from 'vitest';
import {
  WireDecodeError,
  agentRequestOf,
  agentStepOf,
  agentRequestCodec,
  agentResponseCodec,
  agentStepCodec,
  iriTerm,
  literalTerm,
  makeAgentRequest,
  makeAgentResponse,
  makeAgentStep,
  makeTerm,
  type AgentRequest,
  type AgentResponse,
} from '../../../src/wire/index.js';

const json = (buffer: Buffer): unknown => JSON.parse(buffer.toString('utf8'));

/** docs/trustgraph-wire-notes.md §5.4: exactly what TrustGraph's gateway puts on the agent request queue. */
const GATEWAY_REQUEST =
  '{"question": "What is X?", "state": null, "group": null, "history": [], "collection": "default", ' +
  '"streaming": true, "session_id": "", "conversation_id": "", "pattern": "", "task_type": "", "framing": "", ' +
  '"correlation_id": "", "parent_session_id": "", "subagent_goal": "", "expected_siblings": 0}';

/** docs/trustgraph-agent-notes.md §1.3: a bus AgentRequest as the Python schema serialiser writes it. */
const BUS_EXAMPLE = `{"question":"Q","state":"undefined","group":null,
 "history":[{"thought":"t","action":"a","arguments":{"x":"1"},"observation":"o",
             "step_type":"","plan":[],"subagent_results":{}}],
 "collection":"default","streaming":false,"session_id":"s1",
 "conversation_id":"","pattern":"","task_type":"","framing":"",
 "correlation_id":"","parent_session_id":"","subagent_goal":"","expected_siblings":0}`;

const REQUEST_KEYS = [
  'question', 'state', 'group', 'history', 'collection', 'streaming', 'session_id', 'conversation_id', 'pattern',
  'task_type', 'framing', 'correlation_id', 'parent_session_id', 'subagent_goal', 'expected_siblings',
];
const STEP_KEYS = ['thought', 'action', 'arguments', 'observation', 'step_type', 'plan', 'subagent_results'];
const RESPONSE_KEYS = [
  'message_type', 'content', 'end_of_message', 'end_of_dialog', 'explain_id', 'explain_graph', 'explain_triples',
  'message_id', 'error', 'in_token', 'out_token', 'model',
];

describe('AgentRequest', () => {
  it('decodes the exact request the gateway sends', () => {
    const request = agentRequestCodec.decode(Buffer.from(GATEWAY_REQUEST));
    expect(request).toEqual<AgentRequest>({
      question: 'What is X?',
      // Kept as sent: TrustGraph's orchestrator carries a null state on into its plan steps' next requests.
      state: null,
      group: null,
      history: [],
      collection: 'default',
      streaming: true,
      session_id: '',
      conversation_id: '',
      pattern: '',
      task_type: '',
      framing: '',
      correlation_id: '',
      parent_session_id: '',
      subagent_goal: '',
      expected_siblings: 0,
    });
  });

  it('decodes the bus example and re-encodes it to the same keys, order and values', () => {
    const request = agentRequestCodec.decode(BUS_EXAMPLE);
    expect(request.state).toBe('undefined');
    expect(request.history[0]?.arguments).toEqual({ x: '1' });
    const encoded = agentRequestCodec.encode(request);
    const original = JSON.parse(BUS_EXAMPLE) as Record<string, unknown>;
    const again = json(encoded) as Record<string, unknown>;
    expect(again).toEqual(original);
    expect(Object.keys(again)).toEqual(Object.keys(original));
    expect(Object.keys(again)).toEqual(REQUEST_KEYS);
    expect(Object.keys((again.history as Record<string, unknown>[])[0] ?? {})).toEqual(STEP_KEYS);
  });

  it('encodes with Python json.dumps spacing (byte-identical to the Python serialiser)', () => {
    const request = agentRequestCodec.decode(BUS_EXAMPLE);
    expect(agentRequestCodec.encode(request).toString('utf8')).toBe(
      '{"question": "Q", "state": "undefined", "group": null, "history": [{"thought": "t", "action": "a", ' +
        '"arguments": {"x": "1"}, "observation": "o", "step_type": "", "plan": [], "subagent_results": {}}], ' +
        '"collection": "default", "streaming": false, "session_id": "s1", "conversation_id": "", "pattern": "", ' +
        '"task_type": "", "framing": "", "correlation_id": "", "parent_session_id": "", "subagent_goal": "", ' +
        '"expected_siblings": 0}',
    );
  });

  it('keeps a null state as it came (TrustGraph echoes it back), and defaults a missing one to ""', () => {
    expect(agentRequestCodec.decode('{"state": null}').state).toBeNull();
    expect(agentRequestCodec.decode('{}').state).toBe('');
    expect(agentRequestCodec.encode(agentRequestCodec.decode('{"state": null}')).toString('utf8')).toContain('"state": null');
  });

  it('makeAgentRequest fills the TrustGraph defaults', () => {
    const request = makeAgentRequest({ question: 'Q' });
    expect(request).toMatchObject({ question: 'Q', state: '', group: null, history: [], collection: 'default', streaming: false, expected_siblings: 0 });
    expect(Object.keys(request)).toEqual(REQUEST_KEYS);
    expect(makeAgentRequest()).toEqual(agentRequestCodec.decode('{}'));
  });

  it('round-trips a full request', () => {
    const request = makeAgentRequest({
      question: 'Wie heißt das? 😀',
      state: 'analysis',
      group: ['read', 'write'],
      history: [
        {
          thought: 'think',
          action: 'knowledge_query',
          arguments: { question: 'q' },
          observation: 'obs',
          step_type: 'react',
          plan: [{ goal: 'g', tool_hint: 't', depends_on: [0, 1], status: 'done', result: 'r' }],
          subagent_results: { g: 'x' },
        },
      ],
      collection: 'c',
      streaming: true,
      session_id: 's',
      conversation_id: 'conv',
      pattern: 'react',
      task_type: 'general',
      framing: 'f',
      correlation_id: 'corr',
      parent_session_id: 'p',
      subagent_goal: 'goal',
      expected_siblings: 3,
    });
    expect(agentRequestCodec.decode(agentRequestCodec.encode(request))).toEqual(request);
  });

  it("refuses a bare string group (TrustGraph's schema is list[str] | None) and more than 1000 groups; keeps null as null", () => {
    expect(() => agentRequestCodec.decode('{"group": "research"}')).toThrow('field "group": expected array, got string');
    expect(() => agentRequestCodec.decode(JSON.stringify({ group: Array.from({ length: 1001 }, (_, i) => `g${i}`) }))).toThrow(
      'field "group": at most 1000 groups, got 1001',
    );
    expect(agentRequestCodec.decode(JSON.stringify({ group: Array.from({ length: 1000 }, (_, i) => `g${i}`) })).group).toHaveLength(1000);
    expect(agentRequestCodec.decode('{"group": null}').group).toBeNull();
    expect(agentRequestCodec.decode('{}').group).toBeNull();
    expect(agentRequestCodec.decode('{"group": []}').group).toEqual([]);
  });

  it('renders non-string history arguments as Python str()', () => {
    const request = agentRequestCodec.decode(
      JSON.stringify({
        history: [
          { arguments: { n: 10, f: 23.5, big: 1e20, t: true, f2: false, none: null, list: [1, 'a'], obj: { k: 'v' }, s: 'plain' } },
        ],
      }),
    );
    expect(request.history[0]?.arguments).toEqual({
      n: '10',
      f: '23.5',
      big: '1e+20',
      t: 'True',
      f2: 'False',
      none: 'None',
      list: "[1, 'a']",
      obj: "{'k': 'v'}",
      s: 'plain',
    });
  });

  it('tolerates nulls, missing fields and unknown keys everywhere', () => {
    const request = agentRequestCodec.decode(
      JSON.stringify({
        question: null,
        state: null,
        user: 'legacy-2.3-field',
        history: [{ thought: null, arguments: null, plan: null, subagent_results: null, user: 'x', extra: [1] }, {}],
        collection: null,
        streaming: null,
        expected_siblings: null,
        something_new: { deep: true },
      }),
    );
    expect(request.question).toBe('');
    expect(request.collection).toBe('default');
    expect(request.streaming).toBe(false);
    expect(request.expected_siblings).toBe(0);
    expect(request.history).toEqual([makeAgentStep(), makeAgentStep()]);
    expect(Object.keys(request)).toEqual(REQUEST_KEYS);
    expect(request).not.toHaveProperty('user');
    expect(request).not.toHaveProperty('something_new');
  });

  it('history null reads as an empty list', () => {
    expect(agentRequestCodec.decode('{"history": null}').history).toEqual([]);
  });

  it('rejects wrong types with the field path', () => {
    const attempt = (payload: string) => () => agentRequestCodec.decode(payload);
    expect(attempt('{"question": 42}')).toThrow('Cannot decode AgentRequest: field "question": expected string, got number');
    expect(attempt('{"history": [{"thought": ["x"]}]}')).toThrow('field "history[0].thought": expected string, got array');
    expect(attempt('{"history": [{}, {"plan": [{"depends_on": ["1"]}]}]}')).toThrow(
      'field "history[1].plan[0].depends_on[0]": expected number, got string',
    );
    expect(attempt('{"history": {}}')).toThrow('field "history": expected array, got object');
    expect(attempt('{"history": [{"arguments": []}]}')).toThrow('field "history[0].arguments": expected object, got array');
    expect(attempt('{"group": [1]}')).toThrow('field "group[0]": expected string, got number');
    expect(attempt('{"group": 5}')).toThrow('field "group": expected array, got number');
    expect(attempt('{"streaming": "yes"}')).toThrow('field "streaming": expected boolean, got string');
    expect(attempt('{"expected_siblings": "3"}')).toThrow('field "expected_siblings": expected number, got string');
    expect(attempt('{"question": 1, "state": 2}')).toThrow('(and 1 more problem)');
    expect(attempt('{"question": 42}')).toThrow(WireDecodeError);
  });
});

describe('AgentStep', () => {
  it('round-trips and fills defaults', () => {
    const step = makeAgentStep({ thought: 't', arguments: { a: 'b' } });
    expect(step).toEqual({ thought: 't', action: '', arguments: { a: 'b' }, observation: '', step_type: '', plan: [], subagent_results: {} });
    expect(agentStepCodec.decode(agentStepCodec.encode(step))).toEqual(step);
  });

  it('a plan step without status defaults to pending', () => {
    expect(makeAgentStep({ plan: [{ goal: 'g' }] }).plan[0]?.status).toBe('pending');
  });
});

describe('AgentResponse', () => {
  it('encoding a minimal response yields every field, with nulls', () => {
    const encoded = agentResponseCodec.encode(makeAgentResponse({ message_type: 'thought', content: 'hm' }));
    expect(encoded.toString('utf8')).toBe(
      '{"message_type": "thought", "content": "hm", "end_of_message": false, "end_of_dialog": false, ' +
        '"explain_id": null, "explain_graph": null, "explain_triples": [], "message_id": "", "error": null, ' +
        '"in_token": null, "out_token": null, "model": null}',
    );
    expect(Object.keys(json(encoded) as object)).toEqual(RESPONSE_KEYS);
  });

  it('round-trips an error response', () => {
    const response = makeAgentResponse({
      message_type: 'error',
      content: 'Too many agent iterations',
      end_of_message: true,
      end_of_dialog: true,
      error: { type: 'agent-error', message: 'Too many agent iterations' },
    });
    const decoded = agentResponseCodec.decode(agentResponseCodec.encode(response));
    expect(decoded).toEqual(response);
    expect(decoded.error).toEqual({ type: 'agent-error', message: 'Too many agent iterations' });
  });

  it('an empty error object still decodes as an error (Python truthiness)', () => {
    expect(agentResponseCodec.decode('{"error": {}}').error).toEqual({ type: '', message: '' });
    expect(agentResponseCodec.decode('{"error": null}').error).toBeNull();
  });

  it('round-trips explain triples in the internal Term form, including quoted triples', () => {
    const quoted = { s: iriTerm('urn:a'), p: iriTerm('urn:p'), o: literalTerm('x', { language: 'en' }), g: null };
    const response = makeAgentResponse({
      message_type: 'explain',
      explain_id: 'urn:trustgraph:agent:s1',
      explain_graph: 'urn:graph:retrieval',
      explain_triples: [
        { s: iriTerm('urn:trustgraph:agent:s1'), p: iriTerm('http://www.w3.org/2000/01/rdf-schema#label'), o: literalTerm('Agent Question'), g: 'urn:graph:retrieval' },
        { s: { type: 't', triple: quoted }, p: iriTerm('urn:says'), o: null, g: 'urn:graph:retrieval' },
      ],
      in_token: 10,
      out_token: 20,
      model: 'm',
    });
    const encoded = agentResponseCodec.encode(response);
    const decoded: AgentResponse = agentResponseCodec.decode(encoded);
    expect(decoded).toEqual(response);
    const wire = json(encoded) as { explain_triples: Array<{ s: Record<string, unknown> }> };
    expect(wire.explain_triples[0]?.s).toEqual({
      type: 'i', iri: 'urn:trustgraph:agent:s1', id: '', value: '', datatype: '', language: '', triple: null,
    });
    expect(Object.keys(wire.explain_triples[1]?.s ?? {})).toEqual(['type', 'iri', 'id', 'value', 'datatype', 'language', 'triple']);
  });

  it('names the path of a bad nested term', () => {
    expect(() => agentResponseCodec.decode('{"explain_triples": [{"s": {"triple": {"o": {"value": 1}}}}]}')).toThrow(
      'field "explain_triples[0].s.triple.o.value": expected string, got number',
    );
  });
});

describe('encode of a message from make', () => {
  it('writes the same bytes as encoding an equal copy (which is validated again)', () => {
    const made = makeAgentResponse({ message_type: 'explain', explain_id: 'urn:x', explain_triples: [{ s: iriTerm('urn:s'), p: iriTerm('urn:p'), o: literalTerm('é "q"') }] });
    expect(agentResponseCodec.encode(made).toString('utf8')).toBe(agentResponseCodec.encode({ ...made }).toString('utf8'));
  });

  it('a copy with a bad field is still refused', () => {
    const made = makeAgentResponse({ message_type: 'answer', content: 'x' });
    expect(() => agentResponseCodec.encode({ ...made, content: 42 as unknown as string })).toThrow(/content/);
  });

  it('a message from make changed in place is caught under the test runner', () => {
    const made = makeAgentResponse({ message_type: 'answer', content: 'x' });
    (made as { content: unknown }).content = 42;
    expect(() => agentResponseCodec.encode(made)).toThrow(/field "content": expected string/);
    const other = makeAgentResponse({ message_type: 'answer', content: 'x' });
    (other as unknown as Record<string, unknown>).unknown_field = 1;
    expect(() => agentResponseCodec.encode(other)).toThrow(/changed in place/);
  });
});

describe('iriTerm and literalTerm', () => {
  it('give exactly what makeTerm gives (fields, defaults, order)', () => {
    expect(Object.entries(iriTerm('urn:a'))).toEqual(Object.entries(makeTerm({ type: 'i', iri: 'urn:a' })));
    expect(Object.entries(literalTerm('x', { language: 'en' }))).toEqual(Object.entries(makeTerm({ type: 'l', value: 'x', language: 'en' })));
    expect(Object.entries(literalTerm('1', { datatype: 'xsd:int' }))).toEqual(Object.entries(makeTerm({ type: 'l', value: '1', datatype: 'xsd:int' })));
  });
});

describe('messages built with of() (no zod)', () => {
  it('write the bytes make() writes, every field in schema order', () => {
    const step = { thought: 't', action: 'a', arguments: { x: '1' }, observation: 'o' };
    expect(agentStepCodec.encode(agentStepOf(step)).toString()).toBe(agentStepCodec.encode(makeAgentStep(step)).toString());
    const fields = { question: 'q', state: null, group: ['g'], history: [makeAgentStep(step)], session_id: 's' };
    expect(agentRequestCodec.encode(agentRequestOf(fields)).toString()).toBe(agentRequestCodec.encode(makeAgentRequest(fields)).toString());
    expect(Object.keys(agentRequestOf(fields))).toEqual(Object.keys(makeAgentRequest(fields)));
  });

  it('share frozen defaults, so that no message can change another', () => {
    const a = agentRequestOf({ question: 'a' });
    const b = agentRequestOf({ question: 'b' });
    expect(a.history).toBe(b.history);
    expect(() => (a.history as unknown[]).push(1)).toThrow(TypeError);
    expect(Object.isFrozen(a)).toBe(false);
  });
});
