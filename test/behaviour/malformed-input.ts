/**
 * Malformed payloads on every topic the agent consumes, on any harness transport: its request topic, the config
 * push topic, and the response topics of the services it calls (prompt, graph-rag, mcp-tool, tool-service).
 * The agent must answer what it can, fail what it must with a clear error, never hang, and keep serving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentHarness, type AgentHarness, type AskResult } from '../support/agent-harness.js';
import { knowledgeQueryTool } from '../../dev/flow-config.js';
import { onTarget, type HarnessTarget } from '../support/harness-per-test.js';
import { THREE_TOOLS, useTool } from '../support/three-tools.js';
import { offeredToolNames } from '../../dev/stand-ins/prompt-service.js';

/** The one error response a request that cannot be decoded gets. */
function expectDecodeError(result: AskResult, mentions: RegExp): void {
  expect(result.responses).toHaveLength(1);
  const [message] = result.messages;
  expect(message?.properties.id).toBe(result.id);
  expect(message?.value).toMatchObject({
    message_type: '',
    content: '',
    end_of_message: true,
    end_of_dialog: true,
    error: { type: 'agent-error' },
  });
  expect(message?.value.error?.message).toMatch(mentions);
  expect(message?.raw.message_type).toBe('');
}

export function malformedInputSuite(target: HarnessTarget): void {
  describe(onTarget('malformed input', target), () => {
    let h: AgentHarness;

    beforeAll(async () => {
      h = await startAgentHarness({ ...target, ...THREE_TOOLS });
    });

    afterAll(async () => {
      await h?.stop();
    });

    const expectStillServing = async (): Promise<void> => {
      const result = await h.ask({ question: 'are you still there?' });
      expect(result.last).toMatchObject({ message_type: 'answer', content: 'ok', end_of_dialog: true, error: null });
    };

    describe('agent request topic', () => {
      it('not JSON: an error response with empty message_type, agent-error, both end flags, the same id', async () => {
        const result = await h.askRaw('this is {not json');
        expectDecodeError(result, /AgentRequest.*invalid JSON/);
      });

      it('not UTF-8: the same kind of error', async () => {
        const result = await h.askRaw(Buffer.from([0xff, 0xfe, 0x7b, 0x7d]));
        expectDecodeError(result, /UTF-8/);
      });

      it('JSON that is not an object', async () => {
        const result = await h.askRaw('[1, 2, 3]');
        expectDecodeError(result, /expected a JSON object, got array/);
      });

      it('wrong types name the field', async () => {
        expectDecodeError(await h.askRaw('{"question": 42}'), /field "question": expected string, got number/);
        expectDecodeError(await h.askRaw('{"question": "q", "history": "none"}'), /field "history"/);
        expectDecodeError(
          await h.askRaw('{"question": "q", "history": [{"thought": 5, "action": "a"}]}'),
          /field "history\[0\]\.thought"/,
        );
        expectDecodeError(await h.askRaw('{"question": "q", "streaming": "yes"}'), /field "streaming"/);
      });

      it('a request without an id property is answered under id "unknown", as TrustGraph does', async () => {
        const result = await h.askRaw('nonsense', { properties: {} });
        expect(result.id).toBe('unknown');
        expectDecodeError(result, /invalid JSON/);
      });

      it('a huge (500 KB) question is still handled', async () => {
        const question = `${'lorem ipsum '.repeat(41_667)}?`.slice(0, 500_000);
        expect(question.length).toBe(500_000);
        const before = h.prompt.reactCalls().length;
        const result = await h.ask({ question }, { timeoutMs: 30_000 });
        expect(result.last).toMatchObject({ message_type: 'answer', content: 'ok', end_of_dialog: true, error: null });
        expect(h.prompt.reactCalls()).toHaveLength(before + 1);
        expect(h.prompt.lastReact().terms.question).toBe(question);
      });

      it('keeps answering normal requests afterwards', expectStillServing);
    });

    describe('config push topic', () => {
      it('garbage pushes are ignored and a later valid change still applies', async () => {
        const version = h.service.configVersion;
        await h.config.pushRaw('not json at all');
        await h.config.pushRaw('[]');
        await h.config.pushRaw('{"version": "seven", "changes": {"tool": ["x"]}}');
        await h.config.pushRaw('{"version": 5, "changes": {"tool": "not a list"}}');
        await h.config.pushRaw(Buffer.from([0xc3, 0x28]));
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(h.service.configVersion).toBe(version);
        expect(h.service.readiness().ready).toBe(true);

        await h.putTool('zz', knowledgeQueryTool('added-after-garbage'));
        await h.configApplied();
        expect(h.service.configVersion).toBeGreaterThan(version);
        expect(h.service.registries.get(h.workspace).tools.map((t) => t.name)).toContain('added-after-garbage');

        await h.ask({ question: 'which tools?' });
        expect(offeredToolNames(h.prompt.lastReact())).toContain('added-after-garbage');
        await h.deleteTool('zz');
        await h.configApplied();
      });

      it('keeps answering normal requests afterwards', expectStillServing);
    });

    describe('downstream response topics', () => {
      it('prompt: a garbage reply with the right id fails the iteration at once with a decode error', async () => {
        const saved = h.prompt.script;
        h.prompt.script = () => ({ raw: 'garbage{' });
        try {
          const started = Date.now();
          const result = await h.ask({ question: 'hello' });
          expect(Date.now() - started).toBeLessThan(h.settings.requestTimeoutSeconds * 1000);
          expect(result.last).toMatchObject({ message_type: 'error', end_of_dialog: true, end_of_message: true });
          expect(result.last.error?.type).toBe('agent-error');
          expect(result.last.error?.message).toMatch(/Cannot decode PromptResponse: invalid JSON/);
          expect(result.last.error?.message).not.toMatch(/timed? ?out/i);
        } finally {
          h.prompt.script = saved;
        }
      });

      it('prompt (streaming): a garbage chunk ends the dialog with an error', async () => {
        const saved = h.prompt.script;
        h.prompt.script = () => ({ raw: '{"text": ["not", "a", "string"], "end_of_stream": false}' });
        try {
          const result = await h.ask({ question: 'hello', streaming: true });
          expect(result.last).toMatchObject({ message_type: 'error', end_of_dialog: true });
          expect(result.last.error?.message).toMatch(/Cannot decode PromptResponse: field "text"/);
        } finally {
          h.prompt.script = saved;
        }
      });

      it('graph-rag: a garbage reply becomes an error observation and the dialog goes on to an answer', async () => {
        const saved = h.graphRag.answer;
        h.graphRag.answer = () => ({ raw: 'not json' });
        try {
          const result = await h.ask({ question: useTool('kq') });
          const observation = result.responses.find((r) => r.message_type === 'observation');
          expect(observation?.content).toMatch(/^Error: Cannot decode GraphRagResponse: invalid JSON/);
          expect(result.last).toMatchObject({ message_type: 'answer', end_of_dialog: true, error: null });
          expect(result.last.content).toBe(observation?.content);
          expect(result.nextRequests).toHaveLength(1);
        } finally {
          h.graphRag.answer = saved;
        }
      });

      it('mcp-tool: a garbage reply becomes an error observation', async () => {
        const saved = h.mcp.tools['weather-mcp'];
        h.mcp.tools['weather-mcp'] = () => ({ raw: '{"text": ' });
        try {
          const result = await h.ask({ question: useTool('weather') });
          const observation = result.responses.find((r) => r.message_type === 'observation');
          expect(observation?.content).toMatch(/^Error: Cannot decode ToolResponse: invalid JSON/);
          expect(result.last).toMatchObject({ message_type: 'answer', end_of_dialog: true, error: null });
          expect(h.mcp.calls.at(-1)?.parameters).toMatchObject({ city: 'Paris' });
        } finally {
          if (saved) h.mcp.tools['weather-mcp'] = saved;
        }
      });

      it('tool-service: a reply of the wrong shape becomes an error observation', async () => {
        const service = h.toolServices['joke-service'];
        if (!service) throw new Error('tool service stand-in missing');
        const saved = service.handler;
        service.handler = () => ({ raw: '{"response": 17, "end_of_stream": true}' });
        try {
          const result = await h.ask({ question: useTool('jokes') });
          const observation = result.responses.find((r) => r.message_type === 'observation');
          expect(observation?.content).toMatch(/^Error: Cannot decode ToolServiceResponse: field "response"/);
          expect(result.last).toMatchObject({ message_type: 'answer', end_of_dialog: true });
        } finally {
          service.handler = saved;
        }
      });

      it('the tools work again with well-formed replies', async () => {
        expect((await h.ask({ question: useTool('kq') })).last.content).toBe('graph answer');
        expect((await h.ask({ question: useTool('weather') })).last.content).toBe('sunny in Paris');
        expect((await h.ask({ question: useTool('jokes') })).last.content).toBe('a joke about cats');
      });

      it('keeps answering normal requests afterwards', expectStillServing);
    });
  });
}
