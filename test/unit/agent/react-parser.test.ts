import { describe, expect, it } from 'vitest';

import {
  PARSE_ERROR_ACTION,
  PARSE_ERROR_PREFIX,
  parseFailureObservation,
  type ParsedResponse,
} from '../../../src/agent/react-output.js';
import { MAX_QUOTED_CHARS } from '../../../src/agent/react-line-parser.js';
import { parseReactResponse } from '../../../src/agent/react-parser.js';

const action = (thought: string, name: string, args: Record<string, unknown> = {}): ParsedResponse => ({
  kind: 'action',
  thought,
  name,
  args,
});
const final = (thought: string, answer: string): ParsedResponse => ({ kind: 'final', thought, answer });

function failureMessage(text: string | null | undefined): string {
  const result = parseReactResponse(text);
  if (result.kind !== 'parse-error') throw new Error(`expected a parse error, got ${JSON.stringify(result)}`);
  return result.message;
}

const SEARCH = 'Thought: I need to search\nAction: knowledge_query\nArgs: {\n    "question": "What is AI?"\n}';
const SEARCH_RESULT = action('I need to search', 'knowledge_query', { question: 'What is AI?' });

describe('parseReactResponse: docs/trustgraph-agent-notes.md §3.4 edge-case table', () => {
  it('parses Thought / Action / multi-line Args', () => {
    expect(parseReactResponse(SEARCH)).toEqual(SEARCH_RESULT);
  });

  it.each([
    ['without a language tag', '```\n'],
    ['with a language tag', '```json\n'],
    ['with a tag and blank lines around', '\n  ```text\n\n'],
  ])('parses the same Action wrapped in code fences %s', (_name, opening) => {
    expect(parseReactResponse(`${opening}${SEARCH}\n\`\`\`\n`)).toEqual(SEARCH_RESULT);
  });

  it('ignores leading blank lines and extra spaces after labels', () => {
    const text = '\n\nThought:    I need to think about this\nAction:   knowledge_query\nArgs:    {\n "question": "test"\n}\n\n';
    expect(parseReactResponse(text)).toEqual(action('I need to think about this', 'knowledge_query', { question: 'test' }));
  });

  it.each([
    ['Action: "get_bank_balance"', 'get_bank_balance'],
    ['Action: ""get_bank_balance""', 'get_bank_balance'],
    ['Action: """complex_tool"""', 'complex_tool'],
    ["Action: 'foo'", "'foo'"],
    ['Action: `foo`', '`foo`'],
  ])('strips double quotes only: %s', (line, name) => {
    expect(parseReactResponse(`Thought: t\n${line}\nArgs: {}`)).toEqual(action('t', name));
  });

  it('treats an empty action name as no action ("has thought but no action")', () => {
    expect(failureMessage('Thought: Error case\nAction: ""\nArgs: {}')).toBe(
      `${PARSE_ERROR_PREFIX}Response has thought but no action or final answer: Thought: Error case\nAction: ""\nArgs: {}`,
    );
  });

  it('does not crash on a bare `Action:` (TrustGraph raises IndexError there)', () => {
    expect(failureMessage('Thought: x\nAction:\nArgs: {}')).toMatch(/has thought but no action or final answer/);
  });

  it('fails on a thought alone', () => {
    expect(parseReactResponse('Thought: I need to do something')).toEqual({
      kind: 'parse-error',
      thought: 'I need to do something',
      message: `${PARSE_ERROR_PREFIX}Response has thought but no action or final answer: Thought: I need to do something`,
    });
  });

  it('fails on invalid Args JSON with the decoder message', () => {
    const result = parseReactResponse('Thought: x\nAction: knowledge_query\nArgs: {invalid json}');
    expect(result).toMatchObject({ kind: 'parse-error', thought: 'x' });
    expect(result.kind === 'parse-error' && result.message).toMatch(/^LLM parse error: Invalid JSON in Args: .*property name/);
  });

  it.each([
    ['empty', ''],
    ['whitespace', '   \n\t  '],
  ])('fails on %s text with "Could not parse response: "', (_name, text) => {
    expect(parseReactResponse(text)).toEqual({
      kind: 'parse-error',
      thought: '',
      message: `${PARSE_ERROR_PREFIX}Could not parse response: `,
    });
  });

  it('gives an Action with {} when Args is missing', () => {
    expect(parseReactResponse('Thought: x\nAction: knowledge_query')).toEqual(action('x', 'knowledge_query'));
  });

  it('fails on incomplete Args JSON', () => {
    expect(failureMessage('Thought: x\nAction: q\nArgs: {\n "question": "test"\n')).toMatch(
      /^LLM parse error: Invalid JSON in Args: /,
    );
  });

  it('joins a multi-line thought with single spaces', () => {
    expect(parseReactResponse('Thought: A:\n1. B\n2. C\nAction: foo')).toEqual(action('A: 1. B 2. C', 'foo'));
  });

  it('keeps newlines in a multi-line answer (differs from TrustGraph: "Here is: 1. First  This covers")', () => {
    expect(parseReactResponse('Thought: t\nFinal Answer: Here is:\n1. First\n\nThis covers')).toEqual(
      final('t', 'Here is:\n1. First\n\nThis covers'),
    );
  });

  it('keeps a JSON-looking answer verbatim, indentation included (differs: TrustGraph trims each line)', () => {
    const json = '{\n    "result": "success",\n    "data": {\n        "n": 1\n    }\n}';
    expect(parseReactResponse(`Final Answer: ${json}`)).toEqual(final('', json));
    expect(parseReactResponse(`Thought: t\nFinal Answer:\n${json}\n`)).toEqual(final('t', json));
  });

  it('gives Final "42" without a thought', () => {
    expect(parseReactResponse('Final Answer: 42')).toEqual(final('', '42'));
  });

  it('gives an Action without a thought', () => {
    expect(parseReactResponse('Action: foo\nArgs: {"x": 1}')).toEqual(action('', 'foo', { x: 1 }));
  });

  it('rejects Args that is an array (differs: TrustGraph passes the list on and fails later)', () => {
    expect(parseReactResponse('Thought: t\nAction: foo\nArgs: [1,2]')).toEqual({
      kind: 'parse-error',
      thought: 't',
      message: `${PARSE_ERROR_PREFIX}Args must be a JSON object, got array`,
    });
  });

  it.each([
    ['42', 'number'],
    ['"text"', 'string'],
    ['true', 'boolean'],
  ])('rejects scalar Args %s', (value, type) => {
    expect(failureMessage(`Thought: t\nAction: foo\nArgs: ${value}`)).toBe(
      `${PARSE_ERROR_PREFIX}Args must be a JSON object, got ${type}`,
    );
  });

  it('reads Args: null as {}', () => {
    expect(parseReactResponse('Thought: t\nAction: foo\nArgs: null')).toEqual(action('t', 'foo'));
  });

  it('splits `Action: foo Args: {...}` on one line (differs: TrustGraph takes the whole line as the name)', () => {
    expect(parseReactResponse('Action: foo Args: {"x":1}')).toEqual(action('', 'foo', { x: 1 }));
  });

  it('matches labels case-sensitively', () => {
    expect(failureMessage('thought: x\naction: foo\nargs: {}')).toBe(
      `${PARSE_ERROR_PREFIX}Could not parse response: thought: x\naction: foo\nargs: {}`,
    );
  });

  it('ignores text before the first Thought:', () => {
    expect(parseReactResponse(`Sure! Here is my reasoning.\n\n${SEARCH}`)).toEqual(SEARCH_RESULT);
  });

  it('handles CRLF line endings', () => {
    expect(parseReactResponse(SEARCH.replace(/\n/g, '\r\n'))).toEqual(SEARCH_RESULT);
    expect(parseReactResponse('Thought: t\r\nFinal Answer: a\r\nb\r\n')).toEqual(final('t', 'a\nb'));
  });

  it('stops the answer at a later Thought:/Action: line (the first Final Answer wins)', () => {
    expect(parseReactResponse('Thought: t\nFinal Answer: a\nThought: b\nAction: c')).toEqual(final('t', 'a'));
  });
});

describe('parseReactResponse: Action wins once its Args are complete', () => {
  it('ignores a Final Answer after same-line Args (as TrustGraph)', () => {
    expect(parseReactResponse('Thought: t\nAction: foo\nArgs: {"x": 1}\nFinal Answer: done')).toEqual(
      action('t', 'foo', { x: 1 }),
    );
  });

  it('ignores a Final Answer after multi-line Args (differs: TrustGraph returns the Final)', () => {
    expect(parseReactResponse('Thought: t\nAction: foo\nArgs: {\n  "x": 1\n}\nFinal Answer: done')).toEqual(
      action('t', 'foo', { x: 1 }),
    );
  });

  it('does not skip the line after same-line Args (differs: TrustGraph skips it unseen)', () => {
    expect(parseReactResponse('Thought: t\nArgs: {"x": 1}\nAction: foo')).toEqual(action('t', 'foo', { x: 1 }));
  });

  it('lets a Final Answer win over an action whose Args have not come', () => {
    expect(parseReactResponse('Thought: t\nAction: foo\nFinal Answer: bar')).toEqual(final('t', 'bar'));
  });

  it('ignores everything after the complete Args, including a second action', () => {
    expect(parseReactResponse('Thought: t\nAction: a\nArgs: {}\nAction: b\nArgs: {"y": 2}')).toEqual(action('t', 'a'));
  });

  it('ignores the rest of the line after the closing brace', () => {
    expect(parseReactResponse('Action: foo\nArgs: {"x": 1} and then some')).toEqual(action('', 'foo', { x: 1 }));
  });

  it('reads an empty Args followed by a labelled line as {}', () => {
    expect(parseReactResponse('Thought: t\nAction: foo\nArgs:\nFinal Answer: ignored')).toEqual(action('t', 'foo'));
    expect(parseReactResponse('Thought: t\nAction: foo\nArgs:')).toEqual(action('t', 'foo'));
  });
});

describe('parseReactResponse: Args JSON', () => {
  it('ignores braces inside strings', () => {
    expect(parseReactResponse('Action: s\nArgs: {"q": "a } b"}')).toEqual(action('', 's', { q: 'a } b' }));
    expect(parseReactResponse('Action: s\nArgs: {\n  "q": "{{ open",\n  "r": "close }}"\n}\nFinal Answer: x')).toEqual(
      action('', 's', { q: '{{ open', r: 'close }}' }),
    );
  });

  it('ignores escaped quotes inside strings', () => {
    const text = 'Action: s\nArgs: {"q": "say \\"}\\" twice \\\\", "n": 1}';
    expect(parseReactResponse(text)).toEqual(action('', 's', { q: 'say "}" twice \\', n: 1 }));
  });

  it('reads nested objects and arrays', () => {
    const text = 'Action: s\nArgs: {\n  "filter": {"tags": ["a", "b"], "range": {"from": 1, "to": [2, {"x": null}]}}\n}';
    expect(parseReactResponse(text)).toEqual(
      action('', 's', { filter: { tags: ['a', 'b'], range: { from: 1, to: [2, { x: null }] } } }),
    );
  });

  it('reads Args starting on a later line, after blank lines', () => {
    expect(parseReactResponse('Action: s\nArgs:\n\n  {"q": 1}')).toEqual(action('', 's', { q: 1 }));
  });

  it('reads Args wrapped in its own code fence', () => {
    expect(parseReactResponse('Thought: t\nAction: s\nArgs:\n```json\n{\n  "q": "x"\n}\n```')).toEqual(
      action('t', 's', { q: 'x' }),
    );
  });

  it('fails on an unterminated string, which swallows the rest', () => {
    expect(failureMessage('Action: s\nArgs: {"q": "abc}\nFinal Answer: x')).toMatch(/^LLM parse error: Invalid JSON in Args: /);
  });

  it('keeps Args seen before the Action line', () => {
    expect(parseReactResponse('Thought: t\nArgs: {"x": 1}\n\nAction: "foo"')).toEqual(action('t', 'foo', { x: 1 }));
  });
});

describe('parseReactResponse: thoughts and answers', () => {
  it('drops blank lines and repeated Thought: labels in a thought', () => {
    expect(parseReactResponse('Thought:\n  first\n\nThought: second\nAction: foo')).toEqual(action('first second', 'foo'));
  });

  it('starts an answer on the next line without a leading space (differs: TrustGraph gives " foo bar")', () => {
    expect(parseReactResponse('Thought: t\nFinal Answer:\nfoo\nbar')).toEqual(final('t', 'foo\nbar'));
  });

  it('keeps indentation and code fences inside an answer, dropping only the closing fence of the text', () => {
    const answer = 'Use this:\n```python\n    print("hi")\n```\nDone.';
    expect(parseReactResponse(`Thought: t\nFinal Answer: ${answer}`)).toEqual(final('t', answer));
    expect(parseReactResponse(`\`\`\`\nThought: t\nFinal Answer: ${answer}\n\`\`\``)).toEqual(final('t', answer));
  });

  it('drops a trailing fence even without an opening one', () => {
    expect(parseReactResponse('Thought: t\nFinal Answer: done\n```')).toEqual(final('t', 'done'));
  });

  it('keeps backticks that are not a fence line', () => {
    expect(parseReactResponse('Final Answer: use `x````')).toEqual(final('', 'use `x````'));
    expect(parseReactResponse('Final Answer: a\n  ```')).toEqual(final('', 'a\n  ```'));
  });

  it('treats a lone fence as unparseable text', () => {
    expect(failureMessage('```')).toBe(`${PARSE_ERROR_PREFIX}Could not parse response: \`\`\``);
    expect(failureMessage('```json\n```')).toBe(`${PARSE_ERROR_PREFIX}Could not parse response: \`\`\``);
  });

  it('returns an empty answer for a bare Final Answer:', () => {
    expect(parseReactResponse('Thought: t\nFinal Answer:')).toEqual(final('t', ''));
  });
});

describe('parseReactResponse: failures', () => {
  it.each([
    ['null', null],
    ['undefined', undefined],
  ])('never throws on %s (a JSON prompt template)', (name, value) => {
    expect(parseReactResponse(value)).toEqual({
      kind: 'parse-error',
      thought: '',
      message: `${PARSE_ERROR_PREFIX}Expected string response, got ${name}`,
    });
  });

  it('never throws on a non-string at run time', () => {
    expect(failureMessage({ answer: 1 } as unknown as string)).toBe(`${PARSE_ERROR_PREFIX}Expected string response, got object`);
  });

  it('quotes at most MAX_QUOTED_CHARS characters of the text', () => {
    const text = `Thought: ${'x'.repeat(3 * MAX_QUOTED_CHARS)}`;
    const message = failureMessage(text);
    const prefix = `${PARSE_ERROR_PREFIX}Response has thought but no action or final answer: `;
    expect(message).toBe(`${prefix}${text.slice(0, MAX_QUOTED_CHARS)}…`);
  });

  it('quotes the text after fence removal and trimming', () => {
    expect(failureMessage('```json\n  hello\n  world  \n```\n')).toBe(`${PARSE_ERROR_PREFIX}Could not parse response: hello\n  world`);
  });

  it('turns a failure into the observation the agent records', () => {
    const failure = parseReactResponse('Thought: only');
    expect(failure.kind).toBe('parse-error');
    if (failure.kind !== 'parse-error') return;
    expect(parseFailureObservation(failure)).toBe(
      'Error: LLM parse error: Response has thought but no action or final answer: Thought: only',
    );
    expect(PARSE_ERROR_ACTION).toBe('__parse_error__');
  });
});
