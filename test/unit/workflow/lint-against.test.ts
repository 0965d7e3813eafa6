// `tg-agent lint --against`: recorded iterations replayed through a new configuration. Counted by hand on a
// written audit log (test/fixtures/lint/impact-audit.log, every line explained below), and on the audit lines
// the agent itself writes while it runs the spec's workflow.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { readAuditLogs } from '../../../src/lint-against.js';
import { lintWorkspaceConfig, parseConfigDump, runLintCommand } from '../../../src/lint-command.js';
import type { ConfigImpact } from '../../../src/workflow/config-impact.js';
import { startAgentHarness } from '../../support/agent-harness.js';
import { loadSpecExample, WORKFLOW_GROUPS, workflowScript } from '../../support/spec-tools.js';

const FIXTURES = new URL('../../fixtures/lint/', import.meta.url);
const NEW_CONFIG = new URL('impact-new.yaml', FIXTURES).pathname;
const AUDIT_LOG = new URL('impact-audit.log', FIXTURES).pathname;

/**
 * impact-new.yaml takes group read-only from Knowledge Graph Query and removes Reset Workflow. The log's
 * iterations, workspace "default" (c5 is another workspace's, r6 an undecodable request: neither counts):
 *   c1 #1 read-only        undefined offered KGQ, Text Completion, used KGQ  → loses KGQ (used)
 *   c1 #2 read-only        analysis  offered Text Completion                 → loses nothing
 *   c2 #1 (none: default)  undefined offered nothing                         → loses nothing
 *   c3 #1 read-only,admin  undefined offered KGQ, Text Completion, used TC   → loses KGQ (not used)
 *   c4 #1 admin            analysis  offered Graph Update, Reset, used Reset → loses Reset (used)
 *   c4 #2 admin            results   offered Reset                           → loses Reset; offered nothing: a dead end
 */
const HAND_COUNTED: ConfigImpact = {
  workspace: 'default',
  iterations: 6,
  conversations: 4,
  tools: [
    {
      tool: 'Knowledge Graph Query',
      iterations: 2,
      losing: 2,
      losingUsed: 1,
      byGroup: [
        { group: 'read-only', iterations: 2, losing: 2, losingUsed: 1 },
        { group: 'admin', iterations: 1, losing: 1, losingUsed: 0 },
      ],
    },
    { tool: 'Reset Workflow', iterations: 2, losing: 2, losingUsed: 1, byGroup: [{ group: 'admin', iterations: 2, losing: 2, losingUsed: 1 }] },
    { tool: 'Graph Update', iterations: 1, losing: 0, losingUsed: 0, byGroup: [{ group: 'admin', iterations: 1, losing: 0, losingUsed: 0 }] },
    {
      tool: 'Text Completion',
      iterations: 3,
      losing: 0,
      losingUsed: 0,
      byGroup: [
        { group: 'admin', iterations: 1, losing: 0, losingUsed: 0 },
        { group: 'read-only', iterations: 3, losing: 0, losingUsed: 0 },
      ],
    },
  ],
  groups: [
    { group: 'admin', iterations: 3, losing: 3, losingUsed: 1 },
    { group: 'read-only', iterations: 3, losing: 2, losingUsed: 1 },
    { group: 'default', iterations: 1, losing: 0, losingUsed: 0 },
  ],
  deadEnds: [{ state: 'results', conversations: 1, iterations: 1, groups: ['admin'] }],
};

describe('tg-agent lint --against', () => {
  afterEach(() => vi.restoreAllMocks());
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('counts, per tool, per group and per dead-end state, what the hand-counted log says', async () => {
    const read = await readAuditLogs(AUDIT_LOG);
    expect(read).toMatchObject({ files: 1, otherLines: 4 });
    const report = lintWorkspaceConfig('default', parseConfigDump(readFileSync(NEW_CONFIG, 'utf8')), undefined, read.records);
    expect(report.impact).toEqual(HAND_COUNTED);
  });

  it('reads a directory of logs, .gz ones too, and prints the counts, --json for CI; --fail-on-impact exits 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lint-against-'));
    dirs.push(dir);
    const lines = readFileSync(AUDIT_LOG, 'utf8').split('\n');
    writeFileSync(join(dir, 'a.log'), lines.slice(0, 5).join('\n'));
    writeFileSync(join(dir, 'b.log.gz'), gzipSync(lines.slice(5).join('\n')));
    const out: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((text: string) => void out.push(text));
    expect(await runLintCommand(['--file', NEW_CONFIG, '--against', dir, '--json'], {})).toBe(0);
    expect((JSON.parse(out[0]!) as { workspaces: { impact: ConfigImpact }[] }).workspaces[0]!.impact).toEqual(HAND_COUNTED);
    out.length = 0;
    expect(await runLintCommand(['--file', NEW_CONFIG, '--against', dir, '--fail-on-impact'], {})).toBe(1);
    expect(out[0]!.split('\n').slice(2)).toEqual([
      'impact on workspace default: 6 recorded iteration(s) of 4 conversation(s), from 2 file(s)',
      '  tool "Knowledge Graph Query": no longer offered to 2 of the 2 iterations offered it (100 %), 1 of which used it',
      '    group "read-only": 2 of 2 (100 %), 1 of which used it',
      '    group "admin": 1 of 1 (100 %)',
      '  tool "Reset Workflow": no longer offered to 2 of the 2 iterations offered it (100 %), 1 of which used it',
      '    group "admin": 2 of 2 (100 %), 1 of which used it',
      '  group "admin": 3 of its 3 iterations lose a tool they were offered (100 %), 1 of which used one they lose',
      '  group "read-only": 2 of its 3 iterations lose a tool they were offered (67 %), 1 of which used one they lose',
      '  state "results" becomes a dead end (no tool offered) for 1 conversation(s) that reached it (1 iteration(s), groups "admin")',
    ]);
  });

  it('exits 2 naming the audit log it cannot read', async () => {
    const errors: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((text: string) => void errors.push(text));
    expect(await runLintCommand(['--file', NEW_CONFIG, '--against', '/nonexistent/audit.log'], {})).toBe(2);
    expect(errors[0]).toMatch(/^tg-agent lint: cannot read the audit log "\/nonexistent\/audit.log": ENOENT/);
  });

  it("replays the audit lines the agent writes: the spec's workflow without Reset Workflow, Text Completion gone from state results", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lint-against-agent-'));
    dirs.push(dir);
    const log = join(dir, 'agent.log');
    const example = loadSpecExample();
    const harness = await startAgentHarness({
      transport: 'memory',
      tools: example.tool,
      script: workflowScript,
      graphRag: () => 'Company X is linked to Acme Corp',
      mcpTools: { 'analysis-server': () => 'two clusters', 'workflow-server': () => 'workflow reset' },
      // The whole app: its audit trail writes one line per iteration to this log, as in production.
      app: {},
      logger: pino({ level: 'info' }, pino.destination({ dest: log, sync: true })),
    });
    try {
      const result = await harness.ask({ question: 'Company X?', group: WORKFLOW_GROUPS, state: 'undefined', streaming: false });
      expect(result.responses.at(-1)?.end_of_dialog).toBe(true);
    } finally {
      await harness.stop();
    }
    const { 'reset-workflow': _removed, ...tools } = example.tool;
    const changed = { tool: { ...tools, 'text-completion': { ...tools['text-completion'], 'applicable-states': ['undefined', 'analysis'] } }, mcp: example.mcp };
    const config = join(dir, 'new.json');
    writeFileSync(config, JSON.stringify(changed));
    const read = await readAuditLogs(log);
    const impact = lintWorkspaceConfig(harness.workspace, parseConfigDump(readFileSync(config, 'utf8')), undefined, read.records).impact!;
    // undefined (KGQ) → analysis (Complex Analysis Tool) → results (Reset Workflow) → undefined (answer): four iterations.
    expect(impact.iterations).toBe(4);
    const byTool = Object.fromEntries(impact.tools.map(({ tool, iterations, losing, losingUsed }) => [tool, [iterations, losing, losingUsed]]));
    expect(byTool).toEqual({
      'Reset Workflow': [2, 2, 1],
      'Text Completion': [4, 1, 0],
      'Complex Analysis Tool': [1, 0, 0],
      'Graph Update': [1, 0, 0],
      'Knowledge Graph Query': [2, 0, 0],
    });
    expect(impact.groups).toEqual(WORKFLOW_GROUPS.map((group) => ({ group, iterations: 4, losing: 2, losingUsed: 1 })).sort((a, b) => (a.group < b.group ? -1 : 1)));
    expect(impact.deadEnds).toEqual([{ state: 'results', conversations: 1, iterations: 1, groups: [...WORKFLOW_GROUPS].sort() }]);
  });
});
