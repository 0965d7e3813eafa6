import { describe, expect, it } from 'vitest';
import { buildRegistry } from '../../../src/tools/registry/registry.js';
import { ToolLoadCache } from '../../../src/tools/loading/tool-load-cache.js';

const tool = (name: string, extra: Record<string, unknown> = {}) => JSON.stringify({ type: 'knowledge-query', name, ...extra });
const service = JSON.stringify({ 'request-queue': 'non-persistent://tg/request/joke', 'response-queue': 'non-persistent://tg/response/joke' });

describe('reusing loaded tools between rebuilds', () => {
  it('reuses unchanged tools and reloads only the changed one', () => {
    const loadCache = new ToolLoadCache();
    const first = buildRegistry({ workspace: 'w', version: 1, tools: { a: tool('alpha'), b: tool('beta') }, loadCache }).registry;
    const second = buildRegistry({
      workspace: 'w',
      version: 2,
      tools: { a: tool('alpha'), b: tool('beta', { description: 'changed' }) },
      loadCache,
    }).registry;
    expect(second.get('alpha')).toBe(first.get('alpha'));
    expect(second.get('beta')).not.toBe(first.get('beta'));
    expect(second.get('beta')?.description).toBe('changed');
  });

  it('reloads everything when the tool-service descriptors change, and forgets removed tools', () => {
    const loadCache = new ToolLoadCache();
    const tools = { a: tool('alpha'), j: JSON.stringify({ type: 'tool-service', name: 'joke', service: 'joke' }) };
    const first = buildRegistry({ workspace: 'w', version: 1, tools, toolServices: { joke: service }, loadCache });
    expect(first.problems).toEqual([]);
    const second = buildRegistry({ workspace: 'w', version: 2, tools, toolServices: {}, loadCache });
    expect(second.registry.get('alpha')).not.toBe(first.registry.get('alpha'));
    expect(second.registry.get('joke')).toBeUndefined();
    expect(second.problems.map((p) => p.message).join(' ')).toMatch(/joke/);
    // A tool that left and came back is loaded anew.
    const third = buildRegistry({ workspace: 'w', version: 3, tools: {}, toolServices: {}, loadCache });
    expect(third.registry.tools).toEqual([]);
    const fourth = buildRegistry({ workspace: 'w', version: 4, tools: { a: tool('alpha') }, toolServices: {}, loadCache });
    expect(fourth.registry.get('alpha')).not.toBe(second.registry.get('alpha'));
  });

  it('gives the same registry contents with and without the cache', () => {
    const tools = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, tool(`t${i % 45}`, { group: [`g${i % 3}`] })]));
    const loadCache = new ToolLoadCache();
    buildRegistry({ workspace: 'w', version: 1, tools, loadCache });
    const cached = buildRegistry({ workspace: 'w', version: 2, tools, loadCache });
    const plain = buildRegistry({ workspace: 'w', version: 2, tools });
    expect(cached.registry.listing()).toEqual(plain.registry.listing());
    expect(cached.problems.map((p) => p.text)).toEqual(plain.problems.map((p) => p.text));
  });
});
