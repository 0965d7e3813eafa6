/**
 * A real Prometheus (Debian's `prometheus` package) scraping the whole app (src/app.ts) over HTTP while it runs
 * the spec's §5.2 (docs/requirements.md) workflow on the real broker, with the alert rules of deploy/prometheus/alerts.yml loaded:
 * every query of the Grafana dashboard is answered with series, every rule evaluates without error, and the
 * spec's nine metric names are in the scrape. Skips without `prometheus` on a developer machine; fails under CI=true.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startAgentHarness, type AgentHarness } from '../support/agent-harness.js';
import { dashboardQueries, parseExposition } from '../support/dashboard-metrics.js';
import { PROMETHEUS_REQUIRED, prometheusBinary, startPrometheus, type PrometheusServer } from '../support/prometheus.js';
import { scrape } from '../support/prometheus-text.js';
import { loadSpecExample, WORKFLOW_GROUPS, workflowScript } from '../support/spec-tools.js';

const ROOT = join(import.meta.dirname, '../..');
const PROCESSOR = 'agent-manager';
/** Grafana's `$__rate_interval`: wide enough to hold every sample since Prometheus started. */
const RATE_INTERVAL = '5m';

/** The tool-group spec's §8.1 (docs/requirements.md) metrics, with TrustGraph's `tg_` prefix. */
const SPEC_METRICS = [
  'tg_agent_tool_group_requests_total',
  'tg_agent_tool_group_availability',
  'tg_agent_filtered_tools_count',
  'tg_agent_state_transitions_total',
  'tg_agent_workflow_duration_seconds',
  'tg_agent_state_availability',
  'tg_agent_group_access_denied_total',
  'tg_agent_invalid_state_transition_total',
  'tg_agent_privilege_escalation_attempts_total',
];

/** A dashboard query as Grafana would send it for the `processor` variable set to PROCESSOR. */
function asGrafanaSends(expr: string): string {
  return expr.replaceAll('$processor', PROCESSOR).replaceAll('$__rate_interval', RATE_INTERVAL);
}

/** Grafana's `label_values(metric, label)` variable query as the PromQL it stands for. */
function variableQuery(expr: string): { promql: string; label: string } {
  const call = /^label_values\(\s*([^,]+?)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$/.exec(expr.trim());
  if (!call) throw new Error(`not a label_values(metric, label) query: ${expr}`);
  return { promql: `group by (${call[2]}) (${call[1]})`, label: call[2]! };
}

const dashboard = JSON.parse(readFileSync(join(ROOT, 'deploy/grafana/dashboards/tg-agent.json'), 'utf8')) as unknown;
const alertRules = readFileSync(join(ROOT, 'deploy/prometheus/alerts.yml'), 'utf8');
const available = PROMETHEUS_REQUIRED || prometheusBinary('prometheus') !== undefined;

describe.skipIf(!available)('a real Prometheus scraping the agent through the §5.2 workflow', () => {
  let harness: AgentHarness;
  let prometheus: PrometheusServer;
  let scraped: string;

  /** The value of an instant query that returns one series. */
  const single = async (expr: string): Promise<number | undefined> => {
    const { result } = await prometheus.query(expr);
    return result.length === 1 ? Number(result[0]!.value![1]) : undefined;
  };

  beforeAll(async () => {
    harness = await startAgentHarness({
      webSocketUrl: inject('pulsarWebSocketUrl'),
      app: {},
      tools: loadSpecExample().tool,
      script: workflowScript,
      mcpTools: { 'analysis-server': () => 'analysed', 'workflow-server': () => 'reset' },
    });
    const target = new URL(harness.httpUrl()).host;
    prometheus = await startPrometheus({
      config: [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        'rule_files: [alerts.yml]',
        'scrape_configs:',
        '  - job_name: tg-agent',
        `    static_configs: [{ targets: ["${target}"] }]`,
      ].join('\n'),
      files: { 'alerts.yml': alertRules },
    });
    await prometheus.until(async () => (await single('up{job="tg-agent"}')) === 1, 'a first scrape of the agent');

    await harness.ask({ question: 'Company X?', group: WORKFLOW_GROUPS, state: 'undefined' });
    scraped = await scrape(harness.httpUrl());

    // Two scrapes after the workflow: every agent series (those the workflow created too) then has at least
    // two samples, so rate() and increase() over them give values.
    const workflowEnded = Date.now() / 1000;
    await prometheus.until(
      async () => ((await single('timestamp(up{job="tg-agent"})')) ?? 0) > workflowEnded + 1.5,
      'two scrapes after the workflow',
    );
    expect(await single('tg_agent_session_total{outcome="completed"}')).toBe(1);
  }, 180_000);

  afterAll(async () => {
    await prometheus?.stop();
    await harness?.stop();
  });

  it('answers every Grafana panel query with series', async () => {
    const panels = dashboardQueries(dashboard).filter(({ where }) => where.startsWith('panel'));
    expect(panels.length).toBeGreaterThan(30);
    const empty: string[] = [];
    for (const { where, expr } of panels) {
      const { result } = await prometheus.query(asGrafanaSends(expr));
      if (result.length === 0) empty.push(`${where}: ${expr}`);
    }
    expect(empty).toEqual([]);
  });

  it('answers the dashboard\'s variable queries with this agent\'s processor', async () => {
    const variables = dashboardQueries(dashboard).filter(({ where }) => where.startsWith('variable'));
    expect(variables.map((v) => v.where)).toEqual(['variable processor']);
    for (const { expr } of variables) {
      const { promql, label } = variableQuery(expr);
      const { result } = await prometheus.query(promql);
      expect(result.map((series) => series.metric[label])).toEqual([PROCESSOR]);
    }
  });

  it('shows the workflow in the panels: requests per group, transitions, tools offered', async () => {
    const perGroup = await prometheus.query(
      asGrafanaSends('sum by (group) (increase(tg_agent_tool_group_requests_total{processor=~"$processor"}[$__rate_interval]))'),
    );
    const groups = Object.fromEntries(perGroup.result.map((s) => [s.metric.group, Number(s.value![1])]));
    for (const group of WORKFLOW_GROUPS) expect(groups[group], group).toBeGreaterThan(0);
    expect(groups.write).toBe(0);

    const transitions = await prometheus.query('sum by (tool, from, to) (tg_agent_state_transitions_total)');
    expect(transitions.result.map((s) => `${s.metric.tool}: ${s.metric.from} → ${s.metric.to}`).sort()).toEqual([
      'Complex Analysis Tool: analysis → results',
      'Knowledge Graph Query: undefined → analysis',
      'Reset Workflow: results → undefined',
    ]);
    expect(await single('sum(tg_agent_filtered_tools_count_count)')).toBe(4);
    expect(await single('sum(tg_agent_workflow_duration_seconds_count)')).toBe(4);
  });

  it('loads every alert rule and evaluates each without error; none fires on a healthy agent', async () => {
    const expected = [...alertRules.matchAll(/^\s*- alert: (\S+)$/gm)].map((m) => m[1]!);
    expect(expected.length).toBeGreaterThan(5);
    await prometheus.until(
      async () => (await prometheus.rules()).every((rule) => rule.health !== 'unknown'),
      'every rule to be evaluated',
    );
    const rules = await prometheus.rules();
    expect(rules.map((rule) => rule.name).sort()).toEqual([...expected].sort());
    expect(rules.filter((rule) => rule.health !== 'ok').map((rule) => `${rule.name}: ${rule.health} ${rule.lastError ?? ''}`)).toEqual([]);
    expect((await prometheus.query('ALERTS')).result.map((s) => s.metric.alertname)).toEqual([]);
    expect(await single('tg_agent_ready')).toBe(1);
  });

  it('has each of the spec\'s nine metrics in the agent\'s scrape and in Prometheus', async () => {
    const families = parseExposition(scraped);
    for (const name of SPEC_METRICS) {
      expect(families.get(name)?.samples ?? 0, `${name} in the scrape`).toBeGreaterThan(0);
      const stored = await prometheus.query(`count({__name__=~"${name}|${name}_count", job="tg-agent"})`);
      expect(stored.result.length, `${name} in Prometheus`).toBe(1);
    }
  });
});
