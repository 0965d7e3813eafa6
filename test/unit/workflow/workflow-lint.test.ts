import { describe, expect, it } from 'vitest';
import { parsePolicy, type GroupPolicy } from '../../../src/groups/policy.js';
import { buildRegistry, type ToolRegistry } from '../../../src/tools/registry/registry.js';
import { lintWorkflow, LINT_CHECKS, type Finding } from '../../../src/workflow/workflow-lint.js';
import type { McpDiscoveryLookup } from '../../../src/mcp/discovery-result.js';
import { discoveryArgumentSource } from '../../../src/mcp/mcp-tool-arguments.js';
import { SchemaCompiler } from '../../../src/mcp/schema-arguments.js';
import { loadSpecExample } from '../../support/spec-tools.js';
import { PATTERN_IDS } from '../../../src/agent/patterns/pattern-table.js';

function registryOf(tools: Record<string, object>): ToolRegistry {
  const { registry, problems } = buildRegistry({
    workspace: 'w',
    version: 1,
    tools: Object.fromEntries(Object.entries(tools).map(([key, value]) => [key, JSON.stringify(value)])),
  });
  expect(problems).toEqual([]);
  return registry;
}

function policyOf(value: object): GroupPolicy {
  const { policy, problems } = parsePolicy('w', { policy: JSON.stringify(value) }, PATTERN_IDS);
  expect(problems).toEqual([]);
  return policy!;
}

const summary = (findings: Finding[]) => findings.map((f) => `${f.severity} ${f.check}: ${[...f.tools].join(',')}`);

describe('lintWorkflow', () => {
  it("finds no error or warning in the spec's §5.1 tools; only two hints: after Complex Analysis Tool or Reset Workflow their own groups can only answer", () => {
    const findings = lintWorkflow(registryOf(loadSpecExample().tool), undefined);
    expect(summary(findings)).toEqual(['info transition-loses-groups: Complex Analysis Tool', 'info transition-loses-groups: Reset Workflow']);
    expect(findings[0]!.message).toBe(
      'tool "Complex Analysis Tool" (groups "advanced", "compute", "expensive") moves to state "results", where no tool of those groups is ' +
        'available (available there: "Reset Workflow", "Text Completion"): a request with only those groups can only answer after it',
    );
  });

  it('finds a misspelt group used by one tool only', () => {
    const findings = lintWorkflow(
      registryOf({
        a: { type: 'text-completion', name: 'A', group: ['research'] },
        b: { type: 'text-completion', name: 'B', group: ['research'] },
        c: { type: 'text-completion', name: 'C', group: ['reserch'] },
        d: { type: 'text-completion', name: 'D', group: ['Research', 'research'] },
      }),
      undefined,
    );
    // In the order the tools name the groups.
    expect(summary(findings)).toEqual(['warning group-near-miss: C', 'warning group-near-miss: D']);
    expect(findings[0]!.groups).toEqual(['reserch', 'research']);
  });

  it('finds a tool available only in states no conversation reaches, and respects the policy\'s initial states', () => {
    const tools = {
      start: { type: 'text-completion', name: 'Start', state: 'working' },
      work: { type: 'text-completion', name: 'Work', 'applicable-states': ['working'] },
      orphan: { type: 'text-completion', name: 'Orphan', 'applicable-states': ['review'] },
    };
    const findings = lintWorkflow(registryOf(tools), undefined);
    expect(summary(findings)).toEqual(['warning unreachable-state: Orphan']);
    expect(findings[0]!.states).toEqual(['review']);
    // A policy letting conversations start in `review` makes it reachable.
    expect(lintWorkflow(registryOf(tools), policyOf({ 'allowed-groups': ['default'], 'initial-states': ['undefined', 'review'] }))).toEqual([]);
  });

  it('finds a state with no tool available (an error), and a transition into a state where only other groups act (a hint)', () => {
    const findings = lintWorkflow(
      registryOf({
        go: { type: 'text-completion', name: 'Go', group: ['writers'], 'applicable-states': ['undefined'], state: 'nowhere' },
        handoff: { type: 'text-completion', name: 'Handoff', group: ['writers'], 'applicable-states': ['undefined'], state: 'review' },
        review: { type: 'text-completion', name: 'Review', group: ['reviewers'], 'applicable-states': ['review'] },
      }),
      undefined,
    );
    expect(summary(findings)).toEqual(['error dead-end-state: Go', 'info transition-loses-groups: Handoff']);
    expect(findings[0]!.message).toMatch(/^state "nowhere" \(reached through "Go"\) has no tool available/);
  });

  it('finds tools the group policy never lets through, and policy groups no tool has', () => {
    const findings = lintWorkflow(
      registryOf({
        open: { type: 'text-completion', name: 'Open', group: ['default'] },
        locked: { type: 'text-completion', name: 'Locked', group: ['admin'] },
        starOnly: { type: 'text-completion', name: 'Star only', group: [] },
      }),
      policyOf({ 'allowed-groups': ['default', 'audit'] }),
    );
    expect(summary(findings)).toEqual([
      'warning tool-unreachable-by-policy: Locked',
      'warning tool-unreachable-by-policy: Star only',
      'info policy-group-unused: ',
    ]);
    expect(findings[2]!.groups).toEqual(['audit']);
  });

  it('finds availability rules naming a group no tool is in or a tool the workspace does not have, with the name it probably meant', () => {
    const registry = registryOf({
      advanced: { type: 'text-completion', name: 'Place Order', group: ['advanced'] },
      read: { type: 'text-completion', name: 'Read', group: ['knowledge.read'] },
    });
    const always = [{ from: '00:00', to: '24:00' }];
    const findings = lintWorkflow(
      registry,
      policyOf({
        'allowed-groups': ['advanced', 'Advanced', 'knowledge', 'archive'],
        'group-hierarchy': true,
        availability: [
          { groups: ['Advanced', 'knowledge', 'archive'], windows: always },
          { tools: ['place order', 'Read'], windows: always },
        ],
      }),
    );
    expect(findings.filter((f) => f.check === 'availability-never-matches').map((f) => f.message)).toEqual([
      'the group policy\'s availability rule 1 names group "Advanced", which no tool is in (nor below it) (did you mean "advanced"?): the rule never withdraws a tool through it',
      'the group policy\'s availability rule 1 names group "archive", which no tool is in (nor below it): the rule never withdraws a tool through it',
      'the group policy\'s availability rule 2 names tool "place order", which the workspace does not have (did you mean "Place Order"?): the rule never withdraws it',
    ]);
  });

  it('reads the policy through the group hierarchy: a tool below an allowed group is reachable, and that group is in use', () => {
    const registry = registryOf({ read: { type: 'text-completion', name: 'Read', group: ['knowledge.read'] } });
    expect(lintWorkflow(registry, policyOf({ 'allowed-groups': ['knowledge'], 'group-hierarchy': true }))).toEqual([]);
    expect(summary(lintWorkflow(registry, policyOf({ 'allowed-groups': ['knowledge'] })))).toEqual([
      'warning tool-unreachable-by-policy: Read',
      'info policy-group-unused: ',
    ]);
  });

  it('keeps each message a line: lists of names stop at ten and say how many more', () => {
    const tools: Record<string, object> = { go: { type: 'text-completion', name: 'Go', group: ['writers'], 'applicable-states': ['undefined'], state: 'review' } };
    for (let i = 0; i < 30; i++) tools[`r${String(i).padStart(2, '0')}`] = { type: 'text-completion', name: `Reviewer ${i}`, group: ['reviewers'], 'applicable-states': ['review'] };
    const [hint] = lintWorkflow(registryOf(tools), undefined);
    expect(hint!.message).toContain('(available there: "Reviewer 0", "Reviewer 1", "Reviewer 2", "Reviewer 3", "Reviewer 4", "Reviewer 5", "Reviewer 6", "Reviewer 7", "Reviewer 8", "Reviewer 9", and 20 more)');
  });

  it('finds tool names that differ only in case', () => {
    const findings = lintWorkflow(
      registryOf({ a: { type: 'text-completion', name: 'Search' }, b: { type: 'text-completion', name: 'search' } }),
      undefined,
    );
    expect(summary(findings)).toEqual(['warning case-colliding-names: Search,search']);
  });

  it("finds an MCP tool whose declared arguments differ from its server's schema (with discovery)", () => {
    const compiled = new SchemaCompiler().compile({ type: 'object', properties: { query: { type: 'string' } }, required: ['query'] });
    if (!compiled.ok) throw new Error(compiled.message);
    const lookup = new Map([
      ['search-srv', { status: 'ok', mcpKey: 'search-srv', remoteName: 'search-srv', url: 'http://srv/mcp', schema: compiled.schema, description: null, fetchedAt: 0 }],
    ]) as McpDiscoveryLookup;
    const { registry } = buildRegistry({
      workspace: 'w',
      version: 1,
      tools: { s: JSON.stringify({ type: 'mcp-tool', name: 'Search', 'mcp-tool': 'search-srv', arguments: [{ name: 'q', type: 'string', description: 'd' }] }) },
      mcp: discoveryArgumentSource(lookup),
    });
    const findings = lintWorkflow(registry, undefined);
    expect(summary(findings)).toEqual(['warning mcp-arguments-drift: Search']);
    expect(findings[0]!.message).toMatch(/^tool "Search" declares arguments that differ from MCP server "search-srv"'s schema: .*"q"/);
  });

  it('names every check it has', () => {
    expect([...LINT_CHECKS].sort()).toEqual([
      'availability-never-matches',
      'case-colliding-names',
      'dead-end-state',
      'group-near-miss',
      'mcp-arguments-drift',
      'policy-group-unused',
      'state-near-miss',
      'tool-unreachable-by-policy',
      'transition-loses-groups',
      'unknown-key',
      'unreachable-state',
    ]);
  });
});
