import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { PARSE_ERROR_PREFIX, type ParsedResponse } from '../../../src/agent/react-output.js';
import { parseReactResponse } from '../../../src/agent/react-parser.js';
import { StreamingReactParser, type StreamEvent } from '../../../src/agent/streaming-parser.js';

interface Run {
  events: StreamEvent[];
  /** Events returned by each feed() call, then by finish(). */
  perCall: StreamEvent[][];
  result: ParsedResponse;
  thought: string;
  answer: string;
}

function run(chunks: readonly string[]): Run {
  const parser = new StreamingReactParser();
  const perCall = chunks.map((c) => parser.feed(c));
  const end = parser.finish();
  perCall.push(end.events);
  const events = perCall.flat();
  const text = (type: StreamEvent['type']) =>
    events
      .filter((e) => e.type === type)
      .map((e) => e.text)
      .join('');
  return { events, perCall, result: end.result, thought: text('thought'), answer: text('answer') };
}

const chars = (text: string): string[] => text.split('');

/** Deterministic pseudo-random splitting (mulberry32), so failures are reproducible. */
function randomSplits(text: string, seed: number): string[] {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    const size = 1 + Math.floor(next() * 12);
    out.push(text.slice(i, i + size));
    i += size;
  }
  return out;
}

/** Thought events form blocks: text events, then exactly one `final: true` event; no block left open. */
function expectWellFormedThoughtBlocks(events: readonly StreamEvent[]): void {
  let open = false;
  for (const e of events) {
    if (e.type === 'answer') {
      expect(e.text).not.toBe('');
      continue;
    }
    if (e.final) {
      expect(open || e.text !== '').toBe(true);
      open = false;
    } else {
      expect(e.text).not.toBe('');
      open = true;
    }
  }
  expect(open).toBe(false);
}

/** The key property: any chunking gives the non-streaming result, and the events add up to it. */
function expectAgreement(text: string, chunks: readonly string[]): void {
  expect(chunks.join('')).toBe(text);
  const expected = parseReactResponse(text);
  const got = run(chunks);
  expect(got.result).toEqual(expected);
  expect(got.thought).toBe(expected.thought);
  expect(got.answer).toBe(expected.kind === 'final' ? expected.answer : '');
  expectWellFormedThoughtBlocks(got.events);
}

describe('StreamingReactParser: docs/trustgraph-agent-notes.md §3.5 streaming vs non-streaming table', () => {
  const chunkings = (text: string): [string, string[]][] => [
    ['whole', [text]],
    ['1 char at a time', chars(text)],
    ['random splits', randomSplits(text, 42)],
  ];

  it.each(chunkings('Thought: x\nAction: knowledge_query\nArgs: {invalid json}'))(
    'invalid Args JSON is a parse failure, not an exception (%s)',
    (_name, chunks) => {
      const { result } = run(chunks);
      expect(result).toMatchObject({ kind: 'parse-error', thought: 'x' });
      expect(result.kind === 'parse-error' && result.message).toMatch(/^LLM parse error: Invalid JSON in Args: /);
    },
  );

  it.each(chunkings('Final Answer: 42'))('Final Answer without a Thought is Final "42" (%s)', (_name, chunks) => {
    const got = run(chunks);
    expect(got.result).toEqual({ kind: 'final', thought: '', answer: '42' });
    expect(got.answer).toBe('42');
  });

  it.each(chunkings('Thought: x\nAction: foo'))('Action without Args is Action with {} (%s)', (_name, chunks) => {
    expect(run(chunks).result).toEqual({ kind: 'action', thought: 'x', name: 'foo', args: {} });
  });

  it.each(chunkings('Thought: I only think'))('only a thought is a parse failure (%s)', (_name, chunks) => {
    const got = run(chunks);
    expect(got.result).toEqual({
      kind: 'parse-error',
      thought: 'I only think',
      message: `${PARSE_ERROR_PREFIX}Response has thought but no action or final answer: Thought: I only think`,
    });
    expect(got.thought).toBe('I only think');
    expect(got.events.at(-1)).toEqual({ type: 'thought', text: '', final: true });
  });

  it.each(chunkings('Thought: t\nFinal Answer: Here is:\n1. First\n\nThis covers'))(
    'a multi-line final answer keeps its newlines, in the result and in the events (%s)',
    (_name, chunks) => {
      const got = run(chunks);
      expect(got.result).toEqual({ kind: 'final', thought: 't', answer: 'Here is:\n1. First\n\nThis covers' });
      expect(got.answer).toBe('Here is:\n1. First\n\nThis covers');
    },
  );

  it.each([
    ...chunkings('Thought: t\nAction: foo\nArgs: {"x": 1}\nFinal Answer: done'),
    ...chunkings('Thought: t\nAction: foo\nArgs: {\n  "x": 1\n}\nFinal Answer: done'),
  ])('Action…Args then Final Answer is the Action, with no answer events (%s)', (_name, chunks) => {
    const got = run(chunks);
    expect(got.result).toEqual({ kind: 'action', thought: 't', name: 'foo', args: { x: 1 } });
    expect(got.answer).toBe('');
  });

  it.each(chunkings('Thought: t\nAction: search\nArgs: {"q": "a } b"}'))(
    'braces inside JSON strings do not break Args (TrustGraph streaming fails here) (%s)',
    (_name, chunks) => {
      expect(run(chunks).result).toEqual({ kind: 'action', thought: 't', name: 'search', args: { q: 'a } b' } });
    },
  );

  it('does not lose spaces at chunk boundaries (TrustGraph: "I have" + " enough info")', () => {
    const got = run(['Thought: I have', ' enough info', '\nFinal Answer: ok']);
    expect(got.thought).toBe('I have enough info');
    expect(got.result).toMatchObject({ thought: 'I have enough info' });
  });
});

describe('StreamingReactParser: incremental emission', () => {
  it('emits thought text as it arrives, holding back only trailing whitespace', () => {
    const parser = new StreamingReactParser();
    expect(parser.feed('Thought: I am thin')).toEqual([{ type: 'thought', text: 'I am thin', final: false }]);
    expect(parser.feed('king ')).toEqual([{ type: 'thought', text: 'king', final: false }]);
    expect(parser.feed('about it')).toEqual([{ type: 'thought', text: ' about it', final: false }]);
  });

  it('holds back the start of a line until it cannot be a label', () => {
    const parser = new StreamingReactParser();
    parser.feed('Thought: a\n');
    expect(parser.feed('Fin')).toEqual([]);
    expect(parser.feed('e, then')).toEqual([{ type: 'thought', text: ' Fine, then', final: false }]);
  });

  it('marks the thought final when the parser leaves it, in the same event when possible', () => {
    const parser = new StreamingReactParser();
    expect(parser.feed('Thought: a b\nAction: x')).toEqual([{ type: 'thought', text: 'a b', final: true }]);
    const other = new StreamingReactParser();
    expect(other.feed('Thought: a b\nAct')).toEqual([{ type: 'thought', text: 'a b', final: false }]);
    expect(other.feed('ion: x')).toEqual([{ type: 'thought', text: '', final: true }]);
  });

  it('marks the thought final at the end of the stream when nothing followed it', () => {
    const parser = new StreamingReactParser();
    expect(parser.feed('Thought: alone')).toEqual([{ type: 'thought', text: 'alone', final: false }]);
    expect(parser.finish().events).toEqual([{ type: 'thought', text: '', final: true }]);
  });

  it('emits answer text as it arrives', () => {
    const parser = new StreamingReactParser();
    expect(parser.feed('Thought: t\nFinal Answer: Hel')).toEqual([
      { type: 'thought', text: 't', final: true },
      { type: 'answer', text: 'Hel' },
    ]);
    expect(parser.feed('lo\nwor')).toEqual([{ type: 'answer', text: 'lo\nwor' }]);
    expect(parser.feed('ld')).toEqual([{ type: 'answer', text: 'ld' }]);
    expect(parser.finish()).toEqual({ events: [], result: { kind: 'final', thought: 't', answer: 'Hello\nworld' } });
  });

  it('emits nothing for text before the first Thought:', () => {
    const parser = new StreamingReactParser();
    expect(parser.feed('Sure, here it is.\nThought')).toEqual([]);
    expect(parser.feed(':')).toEqual([]);
    expect(parser.feed(' go')).toEqual([{ type: 'thought', text: 'go', final: false }]);
  });

  it('takes labels only at the start of a line (differs: TrustGraph streaming finds them anywhere)', () => {
    const got = run(chars('Sure. Thought: hidden\nFinal Answer: Thought: kept'));
    expect(got.thought).toBe('');
    expect(got.result).toEqual({ kind: 'final', thought: '', answer: 'Thought: kept' });
  });

  it('does not leak an opening fence into the thought', () => {
    const got = run(chars('```json\nThought: t\nAction: a\nArgs: {}\n```'));
    expect(got.thought).toBe('t');
    expect(got.result).toEqual({ kind: 'action', thought: 't', name: 'a', args: {} });
  });

  it.each([
    ['1 char at a time', chars('Thought: t\nFinal Answer: done\n```\n')],
    ['fence in one chunk', ['Thought: t\nFinal Answer: done', '\n```']],
    ['fence split', ['Thought: t\nFinal Answer: done\n`', '``', '  \n\n']],
  ])('does not leak the closing fence into the answer (%s)', (_name, chunks) => {
    const got = run(chunks);
    expect(got.answer).toBe('done');
    expect(got.events.some((e) => e.text.includes('`'))).toBe(false);
    expect(got.result).toEqual({ kind: 'final', thought: 't', answer: 'done' });
  });

  it('emits a fence that turns out to be inside the answer', () => {
    const text = 'Final Answer: code:\n```\nx = 1\n```\nmore';
    expect(run(chars(text)).answer).toBe('code:\n```\nx = 1\n```\nmore');
  });

  it('emits a fence line followed by a line that ends the answer', () => {
    const got = run(chars('Final Answer: a\n```\n\nThought: b\nAction: c'));
    expect(got.result).toEqual({ kind: 'final', thought: '', answer: 'a\n```' });
    expect(got.answer).toBe('a\n```');
  });

  it('emits a fence line inside a thought once more text follows', () => {
    const got = run(chars('Thought: see\n```\nAction: a'));
    expect(got.thought).toBe('see ```');
    expect(got.result).toMatchObject({ thought: 'see ```' });
  });

  it('handles CRLF split across chunks', () => {
    const got = run(['Thought: t\r', '\nFinal Answer: a\r', '\r\nb\r']);
    expect(got.result).toEqual(parseReactResponse('Thought: t\r\nFinal Answer: a\r\r\nb\r'));
    expect(got.result).toEqual({ kind: 'final', thought: 't', answer: 'a\r\nb' });
    expect(got.answer).toBe('a\r\nb');
  });

  it('ignores input once the Args are complete', () => {
    const parser = new StreamingReactParser();
    parser.feed('Thought: t\nAction: a\nArgs: {"x": 1}\n');
    expect(parser.state).toBe('complete');
    expect(parser.feed('Final Answer: no\n')).toEqual([]);
    expect(parser.finish().result).toEqual({ kind: 'action', thought: 't', name: 'a', args: { x: 1 } });
  });

  it('stops emitting the answer at a Thought:/Action: line', () => {
    const got = run(chars('Final Answer: a\nThought: b\nAction: c'));
    expect(got.answer).toBe('a');
    expect(got.thought).toBe('');
  });
});

describe('StreamingReactParser: state and lifecycle', () => {
  it('goes INITIAL → THOUGHT → ACTION → ARGS → COMPLETE', () => {
    const parser = new StreamingReactParser();
    const states = [parser.state];
    for (const chunk of ['Thought: t', '\nAction: a', '\nArgs: {', '"x": 1', '}\n']) {
      parser.feed(chunk);
      states.push(parser.state);
    }
    expect(states).toEqual(['initial', 'thought', 'action', 'args', 'args', 'complete']);
  });

  it('goes THOUGHT → FINAL_ANSWER → COMPLETE', () => {
    const parser = new StreamingReactParser();
    parser.feed('Thought: t\n');
    expect(parser.state).toBe('thought');
    parser.feed('Final Answer: a\nmore');
    expect(parser.state).toBe('final-answer');
    parser.finish();
    expect(parser.state).toBe('complete');
  });

  it('rejects feed() after finish(), and finish() is idempotent', () => {
    const parser = new StreamingReactParser();
    parser.feed('Final Answer: a');
    const first = parser.finish();
    expect(first.events).toEqual([]);
    expect(parser.finish()).toEqual({ events: [], result: first.result });
    expect(() => parser.feed('x')).toThrow(/after finish/);
  });

  it('gives "Could not parse response" for an empty stream', () => {
    expect(new StreamingReactParser().finish()).toEqual({
      events: [],
      result: { kind: 'parse-error', thought: '', message: `${PARSE_ERROR_PREFIX}Could not parse response: ` },
    });
  });

  it('quotes a long ignored line in a failure the same way as the non-streaming parser', () => {
    const text = `${' '.repeat(10)}${'junk '.repeat(2000)}\nmore junk`;
    const got = run(randomSplits(text, 7));
    expect(got.result).toEqual(parseReactResponse(text));
  });
});

/** ~30 inputs covering the grammar's corners; each is checked under many chunkings. */
const CORPUS: readonly string[] = [
  'Thought: I need to search\nAction: knowledge_query\nArgs: {\n    "question": "What is AI?"\n}',
  '```json\nThought: I need to search\nAction: knowledge_query\nArgs: {\n    "question": "What is AI?"\n}\n```',
  '```\nThought: t\nFinal Answer: done\n```\n',
  '\n\nThought:    I need to think about this\nAction:   knowledge_query\nArgs:    {\n "question": "test"\n}\n\n',
  'Thought: t\nAction: ""get_bank_balance""\nArgs: {}',
  'Thought: Error case\nAction: ""\nArgs: {}',
  'Thought: I need to do something',
  'Thought: x\nAction: knowledge_query\nArgs: {invalid json}',
  '',
  '   \n\t  ',
  'Thought: x\nAction: knowledge_query',
  'Thought: x\nAction: q\nArgs: {\n "question": "test"\n',
  'Thought: A:\n1. B\n2. C\nAction: foo\nArgs: {}',
  'Thought: t\nFinal Answer: Here is:\n1. First\n\nThis covers',
  'Final Answer: {\n    "result": "success",\n    "data": {"a": [1, 2]}\n}',
  'Final Answer: 42',
  'Action: foo\nArgs: {"x": 1}',
  'Thought: t\nAction: foo\nArgs: [1,2]',
  'Thought: t\nAction: foo\nArgs: null\nFinal Answer: no',
  'Action: foo Args: {"x":1}',
  'thought: x\naction: foo\nargs: {}',
  'Preamble text\nwith lines\nThought: t\nAction: a\nArgs: {"k": "v"}',
  'Thought: t\r\nAction: a\r\nArgs: {\r\n  "k": "v"\r\n}\r\n',
  'Thought: t\nFinal Answer: a\nThought: b\nAction: c',
  'Thought: t\nAction: s\nArgs: {"q": "a } b", "r": "say \\"}\\" {"}\nFinal Answer: x',
  'Thought: t\nArgs: {"x": 1}\nAction: foo',
  'Thought:\n  first\n\nThought: second   part  \nFinal Answer:\n\n   indented\n      more   \n\n```',
  'Thought: code\nFinal Answer: Use:\n```python\n    print("}")\n```\n  Thought about it\nDone.\n```',
  'Final Answer: a\n```\n\nThought: b',
  'Thought: see\n```\n\nAction: a\nArgs:\n```json\n{"q": 1}\n```',
  'Thought: x\nAction: s\nArgs: {"q": "abc}\nFinal Answer: x',
  'Thought: a\nAction: b\nFinal Answer: c\n  Action',
];

describe('StreamingReactParser agrees with parseReactResponse (property)', () => {
  it.each(CORPUS.map((text, i) => [i, text] as const))('corpus #%i under many chunkings', (_i, text) => {
    expectAgreement(text, [text]);
    expectAgreement(text, chars(text));
    for (let cut = 0; cut <= text.length; cut++) expectAgreement(text, [text.slice(0, cut), text.slice(cut)]);
    for (let seed = 1; seed <= 25; seed++) expectAgreement(text, randomSplits(text, seed));
  });

  const fragment = fc.constantFrom(
    'Thought:',
    'Action:',
    'Args:',
    'Final Answer:',
    'Final',
    'Tho',
    'Act',
    '```',
    '```json',
    '{',
    '}',
    '[',
    ']',
    '"',
    '\\',
    ':',
    'null',
    '42',
    '"q": "a } b"',
    ',',
    ' ',
    '  ',
    '\t',
    '\r',
    'a',
    'foo',
    'x y',
  );
  const line = fc.array(fragment, { maxLength: 6 }).map((parts) => parts.join(''));
  const text = fc
    .tuple(fc.array(line, { maxLength: 10 }), fc.constantFrom('\n', '\r\n'))
    .map(([lines, eol]) => lines.join(eol));
  const chunked = text.chain((t) =>
    fc
      .array(fc.integer({ min: 1, max: 8 }), { maxLength: t.length + 1 })
      .map((sizes) => {
        const chunks: string[] = [];
        let at = 0;
        for (const size of sizes) {
          if (at >= t.length) break;
          chunks.push(t.slice(at, at + size));
          at += size;
        }
        if (at < t.length) chunks.push(t.slice(at));
        return [t, chunks] as const;
      }),
  );

  // 3000 generated cases in six fixed-seed batches: each batch is a test of its own, so no single test holds
  // seconds of CPU work on a busy machine.
  for (const seed of [20240501, 20240502, 20240503, 20240504, 20240505, 20240506]) {
    it(`holds for generated texts and chunkings (fast-check, seed ${seed})`, () => {
      fc.assert(
        fc.property(chunked, ([t, chunks]) => {
          expectAgreement(t, chunks);
          expectAgreement(t, chars(t));
        }),
        { numRuns: 500, seed },
      );
    });
  }
});
