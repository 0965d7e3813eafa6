// Config that cannot throw: values of any depth are walked and frozen without recursion; a tool value over
// the depth or size limit is left out with a problem naming its workspace, key and reason.
import { describe, expect, it } from 'vitest';
import { parseReactResponse } from '../../../src/agent/react-parser.js';
import { MAX_CONFIG_VALUE_CHARS, MAX_CONFIG_VALUE_DEPTH } from '../../../src/config/value-limits.js';
import { deepFreeze } from '../../../src/tools/freeze.js';
import { buildRegistry } from '../../../src/tools/registry/registry.js';
import { checkJsonLimits } from '../../../src/wire/json-limits.js';

function nested(levels: number): { d: unknown } {
  let value: { d: unknown } = { d: 'bottom' };
  for (let i = 1; i < levels; i++) value = { d: value };
  return value;
}

const textTool = (name: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ type: 'text-completion', name, description: name, ...extra });

describe('deepFreeze', () => {
  it('freezes a value nested 200 000 levels without overflowing the stack', () => {
    const value = nested(200_000);
    expect(() => deepFreeze(value)).not.toThrow();
    let inner: unknown = value;
    let depth = 0;
    let frozen = 0;
    while (typeof inner === 'object' && inner !== null) {
      if (Object.isFrozen(inner)) frozen++;
      inner = (inner as { d: unknown }).d;
      depth++;
    }
    expect(depth).toBe(200_000);
    expect(frozen).toBe(200_000);
  });

  it('freezes arrays and objects side by side', () => {
    const value = { a: [{ b: 1 }, [2]], c: { d: [] as unknown[] } };
    deepFreeze(value);
    expect(Object.isFrozen(value.a[0])).toBe(true);
    expect(Object.isFrozen(value.a[1])).toBe(true);
    expect(Object.isFrozen(value.c.d)).toBe(true);
  });
});

describe('checkJsonLimits', () => {
  it('counts the top-level container as depth 1', () => {
    expect(checkJsonLimits({ a: { b: 1 } }, { maxDepth: 2 })).toBeUndefined();
    expect(checkJsonLimits({ a: { b: {} } }, { maxDepth: 2 })).toBe('nesting deeper than 2 levels');
    expect(checkJsonLimits('text', { maxDepth: 0 })).toBeUndefined();
  });

  it('bounds the number of values', () => {
    expect(checkJsonLimits([1, 2, 3], { maxDepth: 5, maxNodes: 4 })).toBeUndefined();
    expect(checkJsonLimits([1, 2, 3, 4], { maxDepth: 5, maxNodes: 4 })).toBe('more than 4 values');
  });

  it('answers for 200 000 levels of arrays without recursion', () => {
    const text = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    expect(checkJsonLimits(JSON.parse(text), { maxDepth: 64 })).toBe('nesting deeper than 64 levels');
  });
});

describe('registry build with values too deep or too large', () => {
  it('leaves out a tool nested 200 000 levels with a problem naming it, and loads the rest', () => {
    const deep = `{"type": "text-completion", "name": "deep", "x": ${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
    const { registry, problems } = buildRegistry({ workspace: 'w', version: 1, tools: { deep, fine: textTool('fine') } });
    expect(registry.tools.map((t) => t.name)).toEqual(['fine']);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ workspace: 'w', kind: 'tool', key: 'deep', severity: 'error' });
    expect(problems[0]!.text).toBe(`workspace "w", tool key "deep": value has nesting deeper than ${MAX_CONFIG_VALUE_DEPTH} levels; left out`);
  });

  it('also when the value arrives already decoded', () => {
    const { registry, problems } = buildRegistry({
      workspace: 'w',
      version: 1,
      tools: { deep: { type: 'text-completion', name: 'deep', x: nested(200_000) }, fine: textTool('fine') },
      toolServices: { svc: { id: 'svc', 'request-queue': 'q', 'response-queue': 'r', x: nested(200_000) } },
    });
    expect(registry.tools.map((t) => t.name)).toEqual(['fine']);
    expect(problems.map((p) => [p.kind, p.key])).toEqual([
      ['tool-service', 'svc'],
      ['tool', 'deep'],
    ]);
  });

  it('leaves out a value over the size limit before parsing it', () => {
    const big = textTool('big', { description: 'd'.repeat(MAX_CONFIG_VALUE_CHARS) });
    const { registry, problems } = buildRegistry({ workspace: 'w', version: 1, tools: { big, fine: textTool('fine') } });
    expect(registry.tools.map((t) => t.name)).toEqual(['fine']);
    expect(problems[0]!.text).toMatch(/tool key "big": value is \d+ characters, over the limit of 1048576; left out/);
  });
});

describe('Args from the model', () => {
  it('nested 10 000 levels: a parse error the model can read, not a stack overflow', () => {
    const text = `Thought: t\nAction: kq\nArgs: {"question": ${'['.repeat(10_000)}"x"${']'.repeat(10_000)}}`;
    const parsed = parseReactResponse(text);
    expect(parsed).toMatchObject({ kind: 'parse-error', message: expect.stringMatching(/Args has nesting deeper than 100 levels/) });
  });
});
