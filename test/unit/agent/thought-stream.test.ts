/**
 * Streamed thought and answer messages against TrustGraph 2.11.1's own: `test/fixtures/trustgraph-2.11.1/
 * streaming.json` holds, for two model replies cut into chunks of several sizes, the messages TrustGraph's ReAct
 * agent sends (its AgentManager and StreamingReActParser, run by `generate.py` there). Ours go through `reason()`
 * (the prompt call and the parser) and `ThoughtStream`, wired as the iteration wires them.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { RequestClient } from '../../../src/bus/request-client.js';
import { reason } from '../../../src/agent/reasoning.js';
import { THOUGHT_TAIL, ThoughtStream } from '../../../src/agent/thought-stream.js';
import { makePromptResponse, type PromptRequest, type PromptResponse } from '../../../src/wire/index.js';

type Message = [type: string, content: string, endOfMessage: boolean];
const streams = JSON.parse(
  readFileSync(new URL('../../fixtures/trustgraph-2.11.1/streaming.json', import.meta.url), 'utf8'),
) as Record<string, { chunks: string[]; messages: Message[] }>;

/** A prompt service that streams `chunks`, then the empty end-of-stream message. */
function promptStreaming(chunks: string[]): RequestClient<PromptRequest, PromptResponse> {
  const client = {
    async *stream() {
      for (const text of chunks) yield makePromptResponse({ text });
      yield makePromptResponse({ text: '', end_of_stream: true });
    },
  };
  return client as unknown as RequestClient<PromptRequest, PromptResponse>;
}

/** What the iteration sends for one streamed reply, as [message_type, content, end_of_message]. */
async function ourMessages(chunks: string[]): Promise<{ messages: Message[]; thought: string }> {
  const messages: Message[] = [];
  const thoughts = new ThoughtStream();
  const sendThought = (text: string | undefined, end: boolean) => {
    if (text !== undefined) messages.push(['thought', text, end]);
  };
  const result = await reason({
    client: promptStreaming(chunks),
    terms: {},
    streaming: true,
    onEvent: async (event) => {
      if (event.type === 'thought') {
        thoughts.add(event.text);
        if (event.final) sendThought(thoughts.end(), true);
      } else {
        messages.push(['answer', event.text, false]);
      }
    },
    onChunkEnd: async (heldBack) => sendThought(thoughts.release(heldBack), false),
  });
  if (result.kind === 'final') messages.push(['answer', '', true]);
  return { messages, thought: result.thought };
}

const ofType = (messages: Message[], type: string) => messages.filter(([t]) => t === type);

describe('streamed thoughts are shaped as TrustGraph 2.11.1 shapes them', () => {
  for (const [name, { chunks, messages: theirs }] of Object.entries(streams)) {
    it(`${name}: same chunks, end_of_message on the last real chunk, no closing empty message`, async () => {
      const { messages: ours, thought } = await ourMessages(chunks);
      // TrustGraph's two quirks (thought-stream.ts): a whitespace-only first chunk when `Thought:` and the space
      // after it arrive apart, and a stripped last chunk. Undo them on TrustGraph's side; everything else is equal.
      const tg = ofType(theirs, 'thought').filter(([, text], i) => !(i === 0 && text.trim() === ''));
      const mine = ofType(ours, 'thought');
      expect(mine.map(([, , end]) => end)).toEqual(tg.map(([, , end]) => end));
      expect(mine.slice(0, -1)).toEqual(tg.slice(0, -1));
      expect(mine.at(-1)?.[1].trimStart()).toBe(tg.at(-1)?.[1]);
      expect(mine.filter(([, text]) => text === '')).toEqual([]);
      expect(mine.map(([, text]) => text).join('')).toBe(thought);
      // Answers: chunks without end_of_message, then the empty end marker; the same text.
      const answers = ofType(ours, 'answer');
      if (answers.length > 0) {
        expect(answers.at(-1)).toEqual(['answer', '', true]);
        expect(answers.slice(0, -1).every(([, , end]) => !end)).toBe(true);
        const text = (list: Message[]) => list.map(([, t]) => t).join('');
        expect(text(answers)).toBe(text(ofType(theirs, 'answer')).trimStart());
      }
    });
  }
});

describe('ThoughtStream', () => {
  it('holds back the last 20 characters, counting what the parser still holds', () => {
    const stream = new ThoughtStream();
    stream.add('x'.repeat(THOUGHT_TAIL));
    expect(stream.release(0)).toBeUndefined();
    stream.add('abc');
    expect(stream.release(0)).toBe('xxx');
    expect(stream.release(5)).toBe('x'.repeat(5));
    expect(stream.end()).toBe(`${'x'.repeat(THOUGHT_TAIL - 8)}abc`);
    expect(stream.end()).toBeUndefined();
  });
  it('counts code points, as Python does', () => {
    const stream = new ThoughtStream();
    stream.add('😀'.repeat(THOUGHT_TAIL + 1));
    expect(stream.release(0)).toBe('😀');
  });
});
