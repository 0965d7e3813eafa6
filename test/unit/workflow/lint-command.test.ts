import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { formatReports, lintWorkspaceConfig, parseConfigDump, runLintCommand } from '../../../src/lint-command.js';
import { loadSpecExample } from '../../support/spec-tools.js';

const FIXTURE = new URL('../../fixtures/workflow/seeded-mistakes.txt', import.meta.url);

describe('tg-agent lint', () => {
  afterEach(() => vi.restoreAllMocks());

  it('finds every seeded mistake of the fixture workspace, one per check (MCP drift needs discovery: workflow-lint.test.ts), and the invalid entry', () => {
    const report = lintWorkspaceConfig('default', parseConfigDump(readFileSync(FIXTURE, 'utf8')));
    expect(report.entryProblems.map((p) => `${p.severity} ${p.key}: ${p.message.slice(0, 60)}`)).toEqual([
      'error tool:broken: workspace "default", tool key "broken" (name "Broken"): fiel',
      'error agent-group-policy: workspace "default": group policy availability rule 2 names ',
      'error agent-group-policy: workspace "default": group policy availability load service ',
      'error agent-group-policy: workspace "default": group policy availability names group "',
    ]);
    expect(report.findings.map((f) => `${f.severity} ${f.check} ${[...f.tools, ...f.groups].join(',')}`)).toEqual([
      'error dead-end-state Summarise',
      'warning availability-never-matches audit',
      'warning availability-never-matches summarise',
      'warning case-colliding-names search,Search',
      'warning group-near-miss Draft,reserch,research',
      'warning tool-unreachable-by-policy Admin,admin',
      'warning unreachable-state Orphan',
      'info policy-group-unused audit',
      'info transition-loses-groups Handoff,writers',
    ]);
    expect(formatReports([report]).split('\n')[0]).toBe('workspace default: 5 error(s), 6 warning(s), 2 note(s)');
  });

  it("finds no error or warning in the spec's §5.1 example", () => {
    const spec = loadSpecExample();
    const json = (entries: Record<string, object>) => Object.fromEntries(Object.entries(entries).map(([k, v]) => [k, JSON.stringify(v)]));
    const report = lintWorkspaceConfig('default', { tool: json(spec.tool), mcp: json(spec.mcp) });
    expect(report.entryProblems).toEqual([]);
    expect(report.findings.filter((f) => f.severity !== 'info')).toEqual([]);
  });

  it('reads a plain JSON object as well as the tg-show-config dump', () => {
    expect(parseConfigDump('{"tool": {"a": {"type": "text-completion", "name": "A"}}}')).toEqual({
      tool: { a: '{"type":"text-completion","name":"A"}' },
    });
    expect(() => parseConfigDump('Version: 3\n[1, 2]')).toThrow('the dump is not a JSON object of config types, got a list');
  });

  it('refuses a dump nested too deeply, or of the wrong shape, naming the entry or type', () => {
    const deep = `{"tool": {"ok": "{}", "deep": ${'['.repeat(500_000)}${']'.repeat(500_000)}}}`;
    expect(() => parseConfigDump(deep)).toThrow(expect.objectContaining({ code: 'TG_CONFIG_DUMP_INVALID', message: 'entry "tool" / "deep" of the dump has nesting deeper than 64 levels: more than the agent takes in one config value' }));
    expect(() => parseConfigDump('{"tool": ["a", "b"]}')).toThrow('config type "tool" of the dump must map keys to values, got a list');
    expect(() => parseConfigDump('{"tool": "x"}')).toThrow('config type "tool" of the dump must map keys to values, got a string ("x")');
  });

  it('reads "__proto__" as a type and as a key like any other', () => {
    const tool = JSON.stringify(JSON.stringify({ type: 'text-completion', name: 'Proto' }));
    const config = parseConfigDump(`{"__proto__": {"tool": {"a": ${tool}}}, "tool": {"__proto__": ${tool}}}`);
    expect(Object.keys(config)).toEqual(['__proto__', 'tool']);
    expect(Object.keys(config.tool!)).toEqual(['__proto__']);
    const report = lintWorkspaceConfig('default', config);
    expect(report.entryProblems).toEqual([]);
    expect(formatReports([report])).toBe('workspace default: 0 error(s), 0 warning(s), 0 note(s)');
  });

  it('exits 1 on errors with --json output, and 2 when it cannot run', async () => {
    const out: string[] = [];
    const err: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((text: string) => void out.push(text));
    vi.spyOn(console, 'error').mockImplementation((text: string) => void err.push(text));
    expect(await runLintCommand(['--file', FIXTURE.pathname, '--json'], {})).toBe(1);
    const parsed = JSON.parse(out[0]!) as { workspaces: { workspace: string; findings: unknown[] }[] };
    expect(parsed.workspaces.map((w) => [w.workspace, w.findings.length])).toEqual([['default', 9]]);
    expect(await runLintCommand(['--file', '/no/such/dump'], {})).toBe(2);
    expect(err.at(-1)).toMatch(/^tg-agent lint: ENOENT: no such file or directory/);
    expect(await runLintCommand(['--bogus'], {})).toBe(2);
    expect(err.at(-1)).toMatch(/Unknown option '--bogus'/);
  });
  it('prints its whole report into a pipe before it exits', () => {
    const tools = Object.fromEntries(
      Array.from({ length: 3000 }, (_, i) => [`t${String(i).padStart(4, '0')}`, JSON.stringify({ type: 'text-completion', name: `Orphan ${i}`, 'applicable-states': [`nowhere-${i}`] })]),
    );
    const dir = mkdtempSync(join(tmpdir(), 'tg-agent-lint-'));
    try {
      writeFileSync(join(dir, 'dump.txt'), `Version: 1\n${JSON.stringify({ tool: tools })}`);
      const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', 'lint', '--file', join(dir, 'dump.txt')], { encoding: 'utf8', maxBuffer: 1 << 26 });
      expect(run.status, run.stderr).toBe(0);
      const lines = run.stdout.trimEnd().split('\n');
      expect(lines[0]).toBe('workspace default: 0 error(s), 3000 warning(s), 0 note(s)');
      expect(lines).toHaveLength(3001);
      expect(lines.at(-1)).toMatch(/^ {2}warning unreachable-state: tool "Orphan 2999"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
