import { describe, expect, it } from 'vitest';
import { buildPatternCatalog } from '../../../src/agent/orchestrator/catalog.js';
import { parsePolicy } from '../../../src/groups/policy.js';
import { checkPattern } from '../../../src/security/pattern-policy.js';
import { makeAgentRequest, makeAgentStep } from '../../../src/wire/index.js';
import { PATTERN_IDS } from '../../../src/agent/patterns/pattern-table.js';

const reactOnly = buildPatternCatalog(PATTERN_IDS, { react: '{"name": "react"}' });
const unconfigured = buildPatternCatalog(PATTERN_IDS);
const supervisor = makeAgentRequest({ question: 'q', pattern: 'supervisor' });

describe('the patterns a client may name', () => {
  it('by default ("configured"): those of the agent-pattern entries, any when the workspace has none (TrustGraph)', () => {
    expect(checkPattern('w', 'configured', reactOnly, supervisor)).toMatchObject({ allowed: false, message: expect.stringContaining('may name "react"') });
    expect(checkPattern('w', 'configured', reactOnly, makeAgentRequest({ question: 'q', pattern: 'react' }))).toEqual({ allowed: true });
    expect(checkPattern('w', 'configured', unconfigured, supervisor)).toEqual({ allowed: true });
    expect(checkPattern('w', 'configured', undefined, supervisor)).toEqual({ allowed: true });
  });

  it('"any" is TrustGraph\'s behaviour; a list allows exactly its patterns', () => {
    expect(checkPattern('w', 'any', reactOnly, supervisor)).toEqual({ allowed: true });
    expect(checkPattern('w', new Set(['supervisor']), reactOnly, supervisor)).toEqual({ allowed: true });
    expect(checkPattern('w', new Set(['react']), unconfigured, supervisor)).toMatchObject({ allowed: false });
    expect(checkPattern('w', new Set(), unconfigured, supervisor)).toMatchObject({ allowed: false, message: expect.stringContaining('may name none') });
  });

  it('checks only a client\'s choice: no pattern (the meta-router\'s), continuing iterations and subagent requests pass', () => {
    const none = new Set<string>();
    expect(checkPattern('w', none, reactOnly, makeAgentRequest({ question: 'q' }))).toEqual({ allowed: true });
    const step = makeAgentStep({ thought: 't', action: 'a', observation: 'o' });
    expect(checkPattern('w', none, reactOnly, makeAgentRequest({ question: 'q', pattern: 'supervisor', history: [step] }))).toEqual({ allowed: true });
    expect(checkPattern('w', none, reactOnly, makeAgentRequest({ question: 'q', pattern: 'react', correlation_id: 'c' }))).toEqual({ allowed: true });
  });

  it('is read from the group policy, default "configured"; a pattern this agent does not run is reported', () => {
    expect(parsePolicy('w', { policy: '{"allowed-groups": []}' }, PATTERN_IDS).policy?.allowedPatterns).toBe('configured');
    expect(parsePolicy('w', { policy: '{"allowed-groups": [], "allowed-patterns": "any"}' }, PATTERN_IDS).policy?.allowedPatterns).toBe('any');
    const listed = parsePolicy('w', { policy: '{"allowed-groups": [], "allowed-patterns": ["react", "swarm"]}' }, PATTERN_IDS);
    expect(listed.policy?.allowedPatterns).toEqual(new Set(['react', 'swarm']));
    expect(listed.problems).toEqual([expect.stringContaining('allowed-patterns names "swarm", which this agent does not run')]);
    const wrong = parsePolicy('w', { policy: '{"allowed-groups": [], "allowed-patterns": "all"}' }, PATTERN_IDS);
    expect(wrong.problems).toEqual([expect.stringContaining('field "allowed-patterns"')]);
    expect(wrong.policy?.allowedGroups.size).toBe(0);
  });
});
