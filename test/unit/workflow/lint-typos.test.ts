// The typos TrustGraph accepts without a word, each in a fixture of its own: misspelt keys (of a tool, of an
// argument, of the group policy) and misspelt states, each found with the key or state that was meant.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { lintWorkspaceConfig, parseConfigDump, runLintCommand } from '../../../src/lint-command.js';
import { normaliseKey, suggestKey } from '../../../src/errors/index.js';

const fixture = (name: string) => parseConfigDump(readFileSync(new URL(`../../fixtures/lint/${name}`, import.meta.url), 'utf8'));

describe('tg-agent lint: misspelt keys', () => {
  const report = lintWorkspaceConfig('default', fixture('misspelt-keys.yaml'));
  const unknown = report.findings.filter((f) => f.check === 'unknown-key');

  it.each([
    ['Search', '"groups"', '"group"', 'error', 'the tool is in the group "default"'],
    ['Summarise', '"applicable_state"', '"applicable-states"', 'error', 'the tool is offered in every state'],
    ['Summarise', '"next-state"', '"state"', 'error', 'the tool never moves the conversation to another state'],
    ['Draft', '"available-in-states"', '"applicable-states" (or "available_in_states")', 'error', 'the tool is offered in every state'],
    ['Review', '"states"', '"applicable-states"', 'error', 'the tool is offered in every state'],
    ['Lookup', '"requred"', '"required"', 'error', 'the argument is required'],
    ['Lookup', '"descripton"', '"description"', 'warning', undefined],
  ])('tool %s: key %s, did you mean %s (%s)', (tool, key, meant, severity, consequence) => {
    const found = unknown.filter((f) => f.tools.includes(tool) && f.message.includes(`key ${key}`));
    expect(found).toHaveLength(1);
    expect(found[0]!.severity).toBe(severity);
    expect(found[0]!.message).toContain(`did you mean ${meant}?`);
    if (consequence === undefined) expect(found[0]!.message).not.toContain('Without it');
    else expect(found[0]!.message).toContain(`Without it, ${consequence}`);
  });

  it('finds nothing else unknown, and the misspelt policy field with the one meant', () => {
    expect(unknown).toHaveLength(7);
    expect(report.entryProblems.map((p) => p.message)).toEqual([
      expect.stringContaining('unknown field(s) "initial-state" (did you mean "initial-states"?)'),
    ]);
  });

  it("accepts a tool service's config params as keys of its tools, and suggests them for near misses", () => {
    const config = {
      'tool-service': { joke: JSON.stringify({ 'request-queue': 'non-persistent://tg/request/joke', 'response-queue': 'non-persistent://tg/response/joke', 'config-params': [{ name: 'style' }] }) },
      tool: {
        a: JSON.stringify({ type: 'tool-service', name: 'A', service: 'joke', style: 'dry' }),
        b: JSON.stringify({ type: 'tool-service', name: 'B', service: 'joke', styel: 'dry' }),
      },
    };
    const findings = lintWorkspaceConfig('default', config).findings.filter((f) => f.check === 'unknown-key');
    expect(findings.map((f) => f.message)).toEqual([
      'tool "B" has the key "styel", which the agent does not read (type "tool-service", service "joke"): did you mean "style"?',
    ]);
  });

  it('suggests by spelling, separators, case, plural and synonym, and by what the value is', () => {
    expect(normaliseKey('availableInStates')).toBe('available-in-states');
    const known = ['group', 'state', 'applicable-states', 'description'];
    const states = { single: 'state', list: 'applicable-states' };
    expect(suggestKey('Groups', undefined, known)).toBe('group');
    expect(suggestKey('nextState', 'x', known, states)).toBe('state');
    expect(suggestKey('stat', 'x', known, states)).toBe('state');
    expect(suggestKey('stat', ['x'], known, states)).toBe('applicable-states');
    expect(suggestKey('ApplicableStates', undefined, known)).toBe('applicable-states');
    expect(suggestKey('colour', undefined, known)).toBeUndefined();
  });
});

describe('tg-agent lint: misspelt states', () => {
  const findings = lintWorkspaceConfig('default', fixture('misspelt-states.yaml')).findings.filter((f) => f.check === 'state-near-miss');

  it('names both fixes when either side of a pair may be the typo, and the one meant when only one side is', () => {
    expect(findings.map((f) => f.message)).toEqual([
      'tool "Analyse" is available in state "anaylsis", which no conversation reaches, and tool "Search" leads to state "analysis", where no tool ' +
        'is listed: did you mean "analysis" in "Analyse"\'s applicable-states, or "anaylsis" as "Search"\'s state?',
      'tool "Approve" is available in state "review", which no conversation reaches, and tool "Report" leads to state "reveiw", where no tool is ' +
        'listed: did you mean "reveiw" in "Approve"\'s applicable-states, or "review" as "Report"\'s state?',
      'tool "Summary" moves the conversation to state "reslts", where no tool is listed: did you mean "results"?',
    ]);
    expect(findings.map((f) => f.states)).toEqual([
      ['anaylsis', 'analysis'],
      ['review', 'reveiw'],
      ['reslts', 'results'],
    ]);
  });
});

describe('tg-agent lint on the examples', () => {
  afterEach(() => vi.restoreAllMocks());
  const dir = fileURLToPath(new URL('../../../examples/', import.meta.url));

  it.each(readdirSync(dir))('examples/%s: exit 0', async (name) => {
    const out: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((text: string) => void out.push(text));
    vi.spyOn(console, 'error').mockImplementation((text: string) => void out.push(text));
    expect(await runLintCommand(['--file', `${dir}${name}`], {}), out.join('\n')).toBe(0);
    expect(out.join('\n')).toMatch(/^workspace default: 0 error\(s\), 0 warning\(s\)/);
  });
});
