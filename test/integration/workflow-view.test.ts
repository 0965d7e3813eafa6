/**
 * The operator's view of a workspace's workflow on the real broker: the linter runs at config load (each
 * finding logged once, counted in `tg_agent_workflow_findings`, listed at `/tools/<ws>`), `/tools/<ws>?tool=…`
 * says why a tool is or is not offered, and `tg-agent lint` reads the same workspace from the config service.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startAgentHarness, type AgentHarness } from '../support/agent-harness.js';
import { configQueueArgs, startAgentProcess } from '../support/agent-process.js';
import { capturingLogger, type LogCapture } from '../support/log-capture.js';
import { loadSpecExample, WORKFLOW_GROUPS } from '../support/spec-tools.js';

/** Test artifacts (the page's screenshot); not in git. */
const ARTIFACTS = fileURLToPath(new URL('../../test-results', import.meta.url));

/** Debian's chromium (the `chromium` package, which .ci/run installs), or CHROMIUM_PATH. */
function chromiumPath(): string {
  return process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
}

describe('the workflow view', () => {
  let h: AgentHarness;
  let logs: LogCapture;

  beforeAll(async () => {
    logs = capturingLogger();
    h = await startAgentHarness({
      webSocketUrl: inject('pulsarWebSocketUrl'),
      logger: logs.logger,
      app: {},
      tools: {
        ...loadSpecExample().tool,
        // A seeded mistake: "admn" for "admin", in one tool only.
        'audit-log': { type: 'text-completion', name: 'Audit Log', description: 'Read the audit log', group: ['admn'], 'applicable-states': ['results'] },
      },
    });
  }, 60_000);

  afterAll(async () => {
    await h?.stop();
  });

  it('lints at config load: the misspelt group logged once, counted, and listed', async () => {
    // The checks run in time slices after the registry is in place: their findings come when they end.
    await h.app!.workflow.settled(h.workspace);
    const warnings = logs.lines.filter((l) => l.check === 'group-near-miss');
    expect(warnings.map((l) => l.msg)).toEqual([
      'Workflow warning: group "admn" is used by tool "Audit Log" only, and is close to "admin" used by other tools: a misspelling? ' +
        'A request naming the other group is never offered this tool',
    ]);
    const listing = (await (await fetch(`${h.httpUrl()}/tools/${encodeURIComponent(h.workspace)}`)).json()) as { workflow_findings: { check: string }[] };
    expect(listing.workflow_findings.map((f) => f.check)).toEqual(['group-near-miss', 'transition-loses-groups', 'transition-loses-groups']);
    const metrics = await (await fetch(`${h.httpUrl()}/metrics`)).text();
    const series = (severity: string) => new RegExp(`^tg_agent_workflow_findings\\{(?=[^}]*workspace="${h.workspace}")(?=[^}]*severity="${severity}")[^}]*\\} (\\d+)$`, 'm').exec(metrics)?.[1];
    expect([series('error'), series('warning'), series('info')]).toEqual(['0', '1', '2']);

    // Fixed: the finding goes, and its count with it; nothing more is logged for it.
    await h.putTool('audit-log', { type: 'text-completion', name: 'Audit Log', group: ['admin'], 'applicable-states': ['results'] });
    await h.configApplied();
    await h.app!.workflow.settled(h.workspace);
    const after = await (await fetch(`${h.httpUrl()}/metrics`)).text();
    expect(new RegExp(`^tg_agent_workflow_findings\\{(?=[^}]*workspace="${h.workspace}")(?=[^}]*severity="warning")[^}]*\\} 0$`, 'm').test(after)).toBe(true);
    expect(logs.lines.filter((l) => l.check === 'group-near-miss')).toHaveLength(1);
  });

  it('says why a tool is hidden from a request, and that it is offered to another', async () => {
    const why = async (query: string) =>
      ((await (await fetch(`${h.httpUrl()}/tools/${encodeURIComponent(h.workspace)}?${query}`)).json()) as { why: { offered: boolean; reasons: { message: string }[] } }).why;
    const hidden = await why('tool=Complex%20Analysis%20Tool&groups=read-only&state=undefined');
    expect(hidden.offered).toBe(false);
    expect(hidden.reasons.map((r) => r.message)).toEqual([
      'not in these groups: it needs one of "advanced", "compute", "expensive"',
      'not available in state "undefined": it is available in "analysis"',
    ]);
    expect(await why(`tool=Complex%20Analysis%20Tool&groups=${WORKFLOW_GROUPS.join(',')}&state=analysis`)).toMatchObject({ offered: true, reasons: [] });
    expect((await why('tool=Complex%20Analysys%20Tool')).reasons[0]!.message).toMatch(/did you mean "Complex Analysis Tool"\?$/);
  });

  it('draws the workflow at /workflow/<ws>: the page with its form, and the same as SVG, Mermaid and JSON', async () => {
    const base = `${h.httpUrl()}/workflow/${encodeURIComponent(h.workspace)}`;
    const page = await fetch(`${base}?groups=read-only&state=undefined`);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await page.text();
    expect(html).toContain('<form method="get"');
    expect(html).toMatch(/<p id="offered">A request with groups <b>read-only<\/b> in state <b>undefined<\/b> is offered: <b class="tool">Knowledge Graph Query<\/b>, <b class="tool">Text Completion<\/b>/);
    expect(html).toMatch(/<div id="picture"><svg /);
    expect(html).not.toMatch(/https?:\/\/(?!www\.w3\.org)/); // nothing fetched from another host
    const svg = await fetch(`${base}.svg`);
    expect(svg.headers.get('content-type')).toBe('image/svg+xml');
    const svgText = await svg.text();
    for (const state of ['undefined', 'analysis', 'results']) expect(svgText).toContain(`>${state}</text>`);
    expect(await (await fetch(`${base}.mmd`)).text()).toMatch(/^flowchart LR\n/);
    const graph = (await (await fetch(`${base}.json?groups=admin&state=results`)).json()) as { request: { offered: string[] } };
    expect(graph.request.offered).toEqual(['Audit Log', 'Reset Workflow']);
    expect((await fetch(`${h.httpUrl()}/workflow/no-such-workspace`)).status).toBe(404);
  });

  it('works in a real browser: the picture renders its states and transitions, and the form draws what a request is offered', async () => {
    const browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.goto(`${h.httpUrl()}/workflow/${encodeURIComponent(h.workspace)}`);
      const nodeTitles = await page.locator('#picture svg g.node > title').allTextContents();
      expect(nodeTitles.sort()).toEqual(['*', 'analysis', 'modification', 'research', 'results', 'undefined']);
      const edges = await page.locator('#picture svg g.edge > title').allTextContents();
      expect(edges.sort()).toEqual(['*->undefined', 'analysis->results', 'analysis->undefined', 'research->analysis', 'results->undefined', 'undefined->analysis']);
      // The SVG is laid out: every state has a box of its own size on the page.
      const box = await page.locator('#picture svg g.node').first().boundingBox();
      expect(box?.width).toBeGreaterThan(40);

      await page.fill('input[name="groups"]', 'read-only');
      await page.fill('input[name="state"]', 'undefined');
      await Promise.all([page.waitForURL(/groups=read-only/), page.click('button[type="submit"]')]);
      expect(await page.locator('#offered b.tool').allTextContents()).toEqual(['Knowledge Graph Query', 'Text Completion']);
      const colourIn = (state: string, tool: string) =>
        page.locator('#picture svg g.node', { has: page.locator(`title:text-is("${state}")`) }).locator(`text:text-is("${tool}")`).getAttribute('fill');
      expect(await colourIn('undefined', 'Knowledge Graph Query')).toBe('#1a7f37');
      expect(await colourIn('analysis', 'Complex Analysis Tool')).toBe('#8c959f');
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: `${ARTIFACTS}/workflow-page.png`, fullPage: true });
    } finally {
      await browser.close();
    }
  }, 60_000);

  it('tg-agent lint reads the workspace from the config service and exits 0 without errors', async () => {
    const lint = startAgentProcess([
      'lint',
      '--workspace', h.workspace,
      '--transport', 'websocket',
      '--pulsar-ws-url', inject('pulsarWebSocketUrl'),
      ...configQueueArgs(h.settings),
    ]);
    const code = await new Promise<number | null>((resolve) => lint.child.once('exit', (exitCode) => resolve(exitCode)));
    expect(code, lint.output).toBe(0);
    expect(lint.output).toMatch(new RegExp(`^workspace ${h.workspace}: 0 error\\(s\\), 0 warning\\(s\\), 2 note\\(s\\)$`, 'm'));
    expect(lint.output).toContain('info    transition-loses-groups: tool "Complex Analysis Tool"');
  }, 60_000);
});
