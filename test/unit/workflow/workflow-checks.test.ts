/**
 * The workflow checks as the agent runs them on every reload: in time slices with the event loop free between
 * them, a newer check of a workspace abandoning the one under way, and a bounded number of log lines.
 */
import { describe, expect, it } from 'vitest';
import type { Severity } from '../../../src/workflow/finding.js';
import { MAX_LOGGED_FINDINGS, WorkflowChecks } from '../../../src/workflow/workflow-checks.js';
import { capturingLogger } from '../../support/log-capture.js';
import { registryOf, textTool } from '../../support/registry-fixtures.js';

/** A workspace of `count` tools available only in a state nothing leads to: one finding each. */
function unreachable(count: number, name = 'orphan', version = 1) {
  const tools = Object.fromEntries(
    Array.from({ length: count }, (_, i) => [`k${String(i).padStart(5, '0')}`, textTool(`${name}-${i}`, { 'applicable-states': ['nowhere'] })]),
  );
  return registryOf(tools, {}, { version }).registry;
}

function checks(sliceMs?: number) {
  const logs = capturingLogger();
  const counts: [string, Readonly<Record<Severity, number>>][] = [];
  const checker = new WorkflowChecks({
    logger: logs.logger,
    policyOf: () => undefined,
    onCounts: (workspace, c) => counts.push([workspace, c]),
    ...(sliceMs === undefined ? {} : { sliceMs }),
  });
  const findingLines = () => logs.lines.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('Workflow '));
  return { checker, logs, counts, findingLines };
}

describe('WorkflowChecks', () => {
  it('checks in slices: the event loop runs other work before the findings are in', async () => {
    const { checker } = checks(0);
    const checking = checker.check(unreachable(300));
    let seenMeanwhile: { pending: boolean; findings: number } | undefined;
    setImmediate(() => (seenMeanwhile = { pending: checker.pending('default'), findings: checker.findingsOf('default').length }));
    expect(await checking).toHaveLength(300);
    expect(seenMeanwhile).toEqual({ pending: true, findings: 0 });
    expect(checker.pending('default')).toBe(false);
    expect(checker.findingsOf('default')).toHaveLength(300);
  });

  it('abandons a check when a newer one of the same workspace starts: only the newer one reports and logs', async () => {
    const { checker, counts, findingLines } = checks(0);
    const older = checker.check(unreachable(200, 'old', 1));
    const newer = checker.check(unreachable(3, 'new', 2));
    expect(await older).toBeUndefined();
    expect((await newer)?.map((f) => f.tools[0])).toEqual(['new-0', 'new-1', 'new-2']);
    expect(findingLines().map((l) => l.msg)).toEqual([0, 1, 2].map((i) => expect.stringContaining(`tool "new-${i}"`)));
    expect(counts).toEqual([['default', { error: 0, warning: 3, info: 0 }]]);
  });

  it('reports nothing for a workspace forgotten while its check runs', async () => {
    const { checker, counts, findingLines } = checks(0);
    const checking = checker.check(unreachable(200));
    checker.forget('default');
    expect(await checking).toBeUndefined();
    await checker.settled('default');
    expect(checker.findingsOf('default')).toEqual([]);
    expect(findingLines()).toEqual([]);
    expect(counts).toEqual([['default', { error: 0, warning: 0, info: 0 }]]);
  });

  it('logs at most a bounded number of new findings, then one line saying how many more the listing holds', async () => {
    const { checker, logs, findingLines } = checks();
    await checker.check(unreachable(MAX_LOGGED_FINDINGS + 50));
    expect(findingLines()).toHaveLength(MAX_LOGGED_FINDINGS);
    expect(logs.lines.at(-1)).toMatchObject({ level: 40, unlogged: 50, msg: '50 more new workflow findings are not logged one by one: they are listed at /tools/default' });
    expect(checker.findingsOf('default')).toHaveLength(MAX_LOGGED_FINDINGS + 50);
    // The same findings again: nothing new to log.
    await checker.check(unreachable(MAX_LOGGED_FINDINGS + 50, 'orphan', 2));
    expect(findingLines()).toHaveLength(MAX_LOGGED_FINDINGS);
  });
});
