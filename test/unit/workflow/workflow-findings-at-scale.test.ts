/**
 * The workflow findings of a workspace of 10 000 tools, as an operator meets them: after a reload of every tool
 * the checks (run in time slices after the new registry) report the new mistake and drop the fixed one, at
 * `/tools/<ws>`, in `tg_agent_workflow_findings` and in the log. The whole app on the in-process bus.
 */
import { describe, expect, it } from 'vitest';
import { capturingLogger } from '../../support/log-capture.js';
import { harnessPerTest } from '../../support/harness-per-test.js';
import { sample } from '../../support/prometheus-text.js';

const TOOLS = 10_000;
const GROUPS = ['research', 'writers', 'reviewers', 'analysts', 'finance', 'legal', 'support', 'sales', 'marketing', 'admin'];

/** 10 000 tools over 10 groups and 8 states, and one tool whose group is a misspelling. */
function workspace(revision: number, typo: string): Record<string, object> {
  const tools: Record<string, object> = {};
  for (let i = 0; i < TOOLS; i++) {
    tools[`tool-${String(i).padStart(5, '0')}`] = {
      type: 'knowledge-query',
      name: `tool_${i}`,
      description: `Tool ${i}, revision ${revision}`,
      group: [GROUPS[i % 10]!, GROUPS[(i * 3) % 10]!],
      ...(i % 3 === 0 ? { 'applicable-states': [`state-${i % 8}`, 'undefined'] } : {}),
      ...(i % 5 === 0 ? { state: `state-${(i + 1) % 8}` } : {}),
    };
  }
  tools['typo'] = { type: 'text-completion', name: 'Typo', group: [typo] };
  return tools;
}

describe('workflow findings after a reload of 10 000 tools', () => {
  const start = harnessPerTest({ transport: 'memory' });

  it('are listed, counted and logged once the checks have run, the fixed ones gone', async () => {
    const logs = capturingLogger();
    const h = await start({ app: {}, logger: logs.logger, tools: workspace(1, 'reserch'), readyTimeoutMs: 120_000 });
    const app = h.app!;
    await app.workflow.settled(h.workspace);
    const nearMisses = () => logs.lines.filter((l) => l.check === 'group-near-miss').map((l) => l.msg);
    expect(nearMisses()).toEqual([expect.stringContaining('group "reserch" is used by tool "Typo" only, and is close to "research" used by other tools')]);

    // Every tool changes, and the typo with them.
    await h.config.putMany(h.workspace, Object.entries(workspace(2, 'writrs')).map(([key, value]) => ({ type: 'tool', key, value })));
    await h.configApplied(120_000);
    await app.workflow.settled(h.workspace);

    const listing = (await (await fetch(`${h.httpUrl()}/tools/${encodeURIComponent(h.workspace)}`)).json()) as {
      tools: unknown[];
      workflow_findings: { check: string; groups: string[] }[];
      workflow_findings_pending: boolean;
    };
    expect(listing.tools).toHaveLength(TOOLS + 1);
    expect(listing.workflow_findings_pending).toBe(false);
    expect(listing.workflow_findings.filter((f) => f.check === 'group-near-miss').map((f) => f.groups)).toEqual([['writrs', 'writers']]);
    const metrics = await (await fetch(`${h.httpUrl()}/metrics`)).text();
    expect(sample(metrics, 'tg_agent_workflow_findings', { workspace: h.workspace, severity: 'warning' })).toBe(1);
    expect(nearMisses()).toEqual([
      expect.stringContaining('group "reserch" is used by tool "Typo" only'),
      expect.stringContaining('group "writrs" is used by tool "Typo" only, and is close to "writers" used by other tools'),
    ]);
  }, 300_000);
});
