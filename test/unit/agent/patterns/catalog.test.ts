import { describe, expect, it } from 'vitest';
import { buildPatternCatalog, patternLimits } from '../../../../src/agent/orchestrator/catalog.js';
import { UsageTracker } from '../../../../src/agent/usage.js';
import { PATTERN_IDS } from '../../../../src/agent/patterns/pattern-table.js';

describe('the pattern catalog from agent-pattern / agent-task-type', () => {
  it('falls back to react / general when nothing is configured', () => {
    const catalog = buildPatternCatalog(PATTERN_IDS);
    expect(catalog.configured).toBe(false);
    expect([...catalog.patterns.keys()]).toEqual(['react']);
    expect(catalog.taskTypes.get('general')?.validPatterns).toEqual(['react']);
  });

  it('reads descriptions, valid patterns, framing and limits; a non-JSON value stands for its key', () => {
    const catalog = buildPatternCatalog(
      PATTERN_IDS,
      { 'plan-then-execute': JSON.stringify({ name: 'plan-then-execute', description: 'Plan', max_replan_depth: 0 }), react: 'not json' },
      { research: JSON.stringify({ description: 'Research', valid_patterns: ['react', 'plan-then-execute'], framing: 'Cite.' }) },
    );
    expect(catalog.configured).toBe(true);
    expect(catalog.patterns.get('react')?.description).toBe('react');
    expect(patternLimits(catalog, 'plan-then-execute')).toEqual({ maxReplanDepth: 0, maxSubagents: 5 });
    expect(catalog.taskTypes.get('research')).toEqual({ id: 'research', description: 'Research', validPatterns: ['react', 'plan-then-execute'], framing: 'Cite.' });
    expect(catalog.problems).toEqual([expect.stringContaining('agent-pattern react is not a JSON object')]);
  });

  it('reports a bad limit and an unknown pattern id', () => {
    const catalog = buildPatternCatalog(PATTERN_IDS, { 'plan-then-execute': JSON.stringify({ max_replan_depth: -1 }), tree: '{}' });
    expect(patternLimits(catalog, 'plan-then-execute').maxReplanDepth).toBe(2);
    expect(catalog.problems).toEqual([
      expect.stringContaining('max_replan_depth must be a whole number >= 0, not -1'),
      expect.stringContaining('agent-pattern tree is not a pattern this agent runs'),
    ]);
  });
});

describe('token usage of one message', () => {
  it('sums every call, keeps the last model, and leaves zero sums out', () => {
    const usage = new UsageTracker();
    expect(usage.fields()).toEqual({ in_token: null, out_token: null, model: null });
    usage.track({ in_token: 3, out_token: 1, model: 'a' });
    usage.track({ in_token: null, out_token: 2, model: 'b' });
    expect(usage.fields()).toEqual({ in_token: 3, out_token: 3, model: 'b' });
  });
});
