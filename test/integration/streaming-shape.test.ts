/**
 * The streaming shape end to end on the broker: a streaming prompt stand-in sends the model's reply in the
 * chunks TrustGraph 2.11.1's own agent was driven with (`test/fixtures/trustgraph-2.11.1/streaming.json`), and
 * the thought messages the agent publishes are TrustGraph's: the same chunks (a 20-character tail held back),
 * `end_of_message` on the last real chunk of each thought, no empty message closing a thought.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentResponse } from '../../src/wire/index.js';
import { startAgentHarness, type AgentHarness } from '../support/agent-harness.js';
import { knowledgeQueryTool } from '../../dev/flow-config.js';
import { brokerUrls } from '../support/transport-contract.js';
import type { PromptTerms } from '../../dev/stand-ins/prompt-service.js';

const { webSocketUrl } = brokerUrls();

type Message = [type: string, content: string, endOfMessage: boolean];
const streams = JSON.parse(
  readFileSync(new URL('../fixtures/trustgraph-2.11.1/streaming.json', import.meta.url), 'utf8'),
) as Record<string, { chunks: string[]; messages: Message[] }>;

function fixture(name: string): { chunks: string[]; messages: Message[] } {
  const found = streams[name];
  if (!found) throw new Error(`no streaming fixture ${name}`);
  return found;
}

/** TrustGraph's thought messages with its two quirks undone (see src/agent/thought-stream.ts). */
function trustgraphThoughts(messages: Message[]): Message[] {
  const thoughts = messages.filter(([type]) => type === 'thought').filter(([, text], i) => !(i === 0 && text.trim() === ''));
  return thoughts;
}

const asMessage = (r: AgentResponse): Message => [r.message_type, r.content, r.end_of_message];

let harness: AgentHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

describe('streaming shape', () => {
  it.each([
    ['action-7', 'final-7'],
    ['action-16', 'final-40'],
  ])('thoughts of %s then %s are published as TrustGraph publishes them', async (first, second) => {
    const action = fixture(first);
    const final = fixture(second);
    harness = await startAgentHarness({
      webSocketUrl,
      tools: { weather: knowledgeQueryTool('weather') },
      script: (terms: PromptTerms) => ((terms.history as unknown[]).length === 0 ? action.chunks : final.chunks),
      graphRag: () => 'Sunny and warm.',
    });
    const result = await harness.ask({ question: 'What should I wear in Paris?', streaming: true });
    expect(result.last).toMatchObject({ message_type: 'answer', content: '', end_of_message: true, end_of_dialog: true });
    expect(harness.prompt.reactCalls().every((c) => c.streaming)).toBe(true);

    for (const [n, expected] of [
      [1, action],
      [2, final],
    ] as const) {
      const thoughts = result.messages
        .filter((m) => m.value.message_type === 'thought' && m.value.message_id.endsWith(`/i${n}/thought`))
        .map((m) => m.value);
      const theirs = trustgraphThoughts(expected.messages);
      const ours = thoughts.map(asMessage);
      expect(ours.length).toBeGreaterThan(1);
      expect(ours.map(([, , end]) => end)).toEqual(theirs.map(([, , end]) => end));
      expect(ours.slice(0, -1)).toEqual(theirs.slice(0, -1));
      expect(ours.at(-1)?.[1].trimStart()).toBe(theirs.at(-1)?.[1]);
      expect(thoughts.filter((t) => t.content === '')).toEqual([]);
      for (const t of thoughts) expect(t.end_of_dialog).toBe(false);
    }

    // The answer: chunks without end flags, then the empty end-of-dialog answer (as TrustGraph).
    const answers = result.responses.filter((r) => r.message_type === 'answer');
    expect(answers.slice(0, -1).every((a) => !a.end_of_message && !a.end_of_dialog && a.content !== '')).toBe(true);
    const theirAnswer = final.messages.filter(([type]) => type === 'answer').map(([, text]) => text).join('');
    expect(answers.map((a) => a.content).join('')).toBe(theirAnswer.trimStart());
    // Every message on the wire carries every AgentResponse field.
    for (const m of result.messages) expect(Object.keys(m.raw)).toHaveLength(12);
  });
});
