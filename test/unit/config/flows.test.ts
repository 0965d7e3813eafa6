import { describe, expect, it } from 'vitest';
import { diffFlows, flowKey, parseFlows } from '../../../src/config/flows.js';

const topics = {
  request: 'request:tg:agent:default:default',
  next: 'request:tg:agent:default:default',
  response: 'response:tg:agent:default:default',
  'prompt-request': 'request:tg:prompt-rag:default:default',
  'prompt-response': 'response:tg:prompt-rag:default:default',
};

describe('flow definitions from processor:agent-manager', () => {
  it('parses a flow entry', () => {
    const { flows, problems } = parseFlows('default', { default: JSON.stringify({ topics, parameters: {} }) });
    expect(problems).toEqual([]);
    expect(flows).toHaveLength(1);
    expect(flows[0]).toMatchObject({ workspace: 'default', flow: 'default', topics });
  });

  it('reports a bad entry and keeps the good ones', () => {
    const { flows, problems } = parseFlows('ws', {
      good: JSON.stringify({ topics }),
      broken: '{not json',
      partial: JSON.stringify({ topics: { request: 'request:tg:agent:ws:partial' } }),
      wrong: JSON.stringify({ topics: 'nope' }),
    });
    expect(flows.map((f) => f.flow)).toEqual(['good']);
    expect(problems.map((p) => p.flow).sort()).toEqual(['broken', 'partial', 'wrong']);
    expect(problems.find((p) => p.flow === 'partial')?.message).toMatch(/missing topics: next, response, prompt-request, prompt-response/);
    expect(problems.find((p) => p.flow === 'broken')?.message).toMatch(/not valid JSON/);
  });

  it('diffs running and wanted flows', () => {
    const a = parseFlows('ws', { a: JSON.stringify({ topics }), b: JSON.stringify({ topics }) }).flows;
    const running = new Map(a.map((f) => [flowKey(f), f]));
    const changedTopics = { ...topics, response: 'response:tg:agent:ws:other' };
    const wanted = parseFlows('ws', { b: JSON.stringify({ topics: changedTopics }), c: JSON.stringify({ topics }) }).flows;
    const { start, stop } = diffFlows(running, wanted);
    expect(stop.map((f) => f.flow).sort()).toEqual(['a', 'b']);
    expect(start.map((f) => f.flow).sort()).toEqual(['b', 'c']);
    expect(diffFlows(running, a)).toEqual({ start: [], stop: [] });
  });
});
