import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { parseReactResponse } from '../../../src/agent/react-parser.js';
import { openAiModel } from '../../../dev/local/openai-model.js';
import { renderReactPrompt } from '../../../dev/local/react-prompt.js';
import { scriptedModel } from '../../../dev/local/scripted-model.js';

const tool = (name: string) => ({ name, description: `${name} tool`, arguments: [] });

describe('the local run scripted model', () => {
  it('plays the spec §5.2 (docs/requirements.md) workflow with the tools it is offered, in a form the agent parses', () => {
    const first = parseReactResponse(scriptedModel({ question: 'Q?', tools: [tool('Knowledge Graph Query')], history: [] }));
    expect(first).toMatchObject({ kind: 'action', name: 'Knowledge Graph Query', args: { question: 'Q?' } });
    const second = parseReactResponse(
      scriptedModel({
        question: 'Q?',
        tools: [tool('Complex Analysis Tool'), tool('Reset Workflow')],
        history: [{ action: 'Knowledge Graph Query', observation: 'found' }],
      }),
    );
    expect(second).toMatchObject({ kind: 'action', name: 'Complex Analysis Tool', args: { dataset: 'company-x', depth: 2 } });
  });

  it('answers with what it observed once no workflow tool is offered, and says it is scripted', () => {
    const final = parseReactResponse(
      scriptedModel({ question: 'Q?', tools: [tool('Text Completion')], history: [{ action: 'Knowledge Graph Query', observation: 'found X' }] }),
    );
    expect(final.kind).toBe('final');
    expect(final.thought).toContain('scripted model');
    expect(final.kind === 'final' ? final.answer : '').toBe('Here is what I found:\n- Knowledge Graph Query: found X');
  });
});

describe('the ReAct prompt of the local run', () => {
  it('lists tools with their arguments and replays history', () => {
    const text = renderReactPrompt({
      question: 'What is X?',
      tools: [{ name: 'lookup', description: 'Look up', arguments: [{ name: 'q', type: 'string', description: 'query', required: false }] }],
      history: [{ thought: 't', action: 'lookup', arguments: { q: 'x' }, observation: 'o' }],
    });
    expect(text).toContain('- lookup: Look up');
    expect(text).toContain('Optional: "q" (string) query');
    expect(text).toContain('Question: What is X?');
    expect(text).toContain('Action: lookup\nArgs: {"q":"x"}\nObservation: o');
  });
});

describe('the OpenAI-compatible model', () => {
  it('posts the rendered prompt to /chat/completions and returns the first choice', async () => {
    const seen: { url?: string; auth?: string; body?: { model: string; messages: { role: string; content: string }[] } } = {};
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        Object.assign(seen, { url: req.url, auth: req.headers.authorization, body: JSON.parse(body) as unknown });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ choices: [{ message: { content: 'Thought: x\nFinal Answer: 42' } }] }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`;
      const model = openAiModel({ url, model: 'test-model', apiKey: 'k' });
      expect(await model({ question: 'Q', tools: [], history: [] })).toBe('Thought: x\nFinal Answer: 42');
      expect(seen.url).toBe('/v1/chat/completions');
      expect(seen.auth).toBe('Bearer k');
      expect(seen.body?.model).toBe('test-model');
      expect(seen.body?.messages[1]?.content).toContain('Question: Q');
    } finally {
      server.close();
    }
  });

  it('names the endpoint and status when the model fails', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(503);
      res.end('overloaded');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const model = openAiModel({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, model: 'm' });
      await expect(model({ question: 'Q' })).rejects.toThrow(/chat\/completions answered 503: overloaded/);
    } finally {
      server.close();
    }
  });
});
