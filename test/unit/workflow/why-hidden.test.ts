import { describe, expect, it } from 'vitest';
import { parsePolicy } from '../../../src/groups/policy.js';
import { whyHidden } from '../../../src/workflow/why-hidden.js';
import { specRegistry } from '../../support/spec-tools.js';
import { PATTERN_IDS } from '../../../src/agent/patterns/pattern-table.js';

const registry = specRegistry();

describe('whyHidden', () => {
  it('says a tool is offered, with the request after defaults', () => {
    expect(whyHidden(registry, undefined, { groups: ['read-only'], state: null }, 'Knowledge Graph Query')).toEqual({
      workspace: 'w',
      tool: 'Knowledge Graph Query',
      groups: ['read-only'],
      state: 'undefined',
      offered: true,
      reasons: [],
    });
  });

  it('names the groups and the states it needs, both when both are wrong', () => {
    const verdict = whyHidden(registry, undefined, { groups: ['read-only'], state: 'analysis' }, 'Complex Analysis Tool');
    expect(verdict.offered).toBe(false);
    expect(verdict.reasons.map((r) => r.message)).toEqual([
      'not in these groups: it needs one of "advanced", "compute", "expensive"',
    ]);
    const both = whyHidden(registry, undefined, { groups: ['read-only'], state: 'results' }, 'Complex Analysis Tool');
    expect(both.reasons.map((r) => r.kind)).toEqual(['not-in-groups', 'not-in-state']);
    expect(both.reasons[1]!.message).toBe('not available in state "results": it is available in "analysis"');
  });

  it('suggests the closest names for an unknown tool', () => {
    const verdict = whyHidden(registry, undefined, { groups: ['*'], state: null }, 'knowledge graph qery');
    expect(verdict.reasons).toEqual([
      {
        kind: 'unknown-tool',
        message: 'workspace "w" has no tool "knowledge graph qery"; did you mean "Knowledge Graph Query"?',
        didYouMean: ['Knowledge Graph Query'],
      },
    ]);
  });

  it('puts the group policy first when it refuses the whole request', () => {
    const { policy } = parsePolicy('w', { policy: JSON.stringify({ 'allowed-groups': ['read-only'] }) }, PATTERN_IDS);
    const verdict = whyHidden(registry, policy, { groups: ['admin'], state: 'results' }, 'Reset Workflow');
    expect(verdict.offered).toBe(false);
    expect(verdict.reasons.map((r) => r.kind)).toEqual(['group-policy']);
    expect(verdict.reasons[0]!.message).toMatch(/^the group policy refuses the whole request: .*"admin"/);
  });
});
