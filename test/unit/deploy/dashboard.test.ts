/**
 * deploy/grafana/dashboards/tg-agent.json against the metrics the agent really exports: a scrape of a
 * fresh AgentMetrics registry (after a registry rebuild, so labelled series exist).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  checkDashboardMetrics,
  checkExpression,
  dashboardQueries,
  metricIdentifiers,
  resolveMetric,
  type MetricFamilies,
} from '../../support/dashboard-metrics.js';
import { freshMetricFamilies } from '../../support/fresh-metrics.js';

const ROOT = join(import.meta.dirname, '../../..');
const DASHBOARD_PATH = join(ROOT, 'deploy/grafana/dashboards/tg-agent.json');
const DATASOURCE_VARIABLE = '${datasource}';

interface Panel {
  id?: unknown;
  type?: unknown;
  title?: unknown;
  datasource?: unknown;
  gridPos?: { x: number; y: number; w: number; h: number };
  targets?: { datasource?: unknown; expr?: unknown; refId?: unknown }[];
  panels?: Panel[];
}

interface Dashboard {
  uid?: unknown;
  title?: unknown;
  schemaVersion?: unknown;
  panels: Panel[];
  templating: { list: Record<string, unknown>[] };
  annotations?: { list?: Record<string, unknown>[] };
}

function allPanels(panels: Panel[] | undefined): Panel[] {
  return (panels ?? []).flatMap((panel) => [panel, ...allPanels(panel.panels)]);
}

let dashboard: Dashboard;
let families: MetricFamilies;

beforeAll(async () => {
  dashboard = JSON.parse(readFileSync(DASHBOARD_PATH, 'utf8')) as Dashboard;
  families = await freshMetricFamilies();
});

describe('Grafana dashboard: structure', () => {
  it('is a dashboard with uid tg-agent and a schema version Grafana 10/11 reads', () => {
    expect(dashboard.uid).toBe('tg-agent');
    expect(typeof dashboard.title).toBe('string');
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    expect(dashboard.schemaVersion).toBeLessThanOrEqual(41);
    expect(allPanels(dashboard.panels).length).toBeGreaterThan(20);
  });

  it('gives every panel a unique id', () => {
    const ids = allPanels(dashboard.panels).map((panel) => panel.id);
    expect(ids.every((id) => Number.isInteger(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('gives every query a refId unique within its panel and keeps panels inside the 24-column grid', () => {
    for (const panel of allPanels(dashboard.panels)) {
      const refIds = (panel.targets ?? []).map((t) => t.refId);
      expect(new Set(refIds).size, `panel ${String(panel.id)}`).toBe(refIds.length);
      expect(panel.gridPos, `panel ${String(panel.id)} gridPos`).toBeDefined();
      expect(panel.gridPos!.x + panel.gridPos!.w, `panel ${String(panel.id)} width`).toBeLessThanOrEqual(24);
    }
  });

  it('declares a prometheus `datasource` variable and a `processor` variable read from tg_agent_session_total', () => {
    const variables = new Map(dashboard.templating.list.map((v) => [v.name, v]));
    expect(variables.get('datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' });
    const processor = variables.get('processor');
    expect(processor?.type).toBe('query');
    expect(JSON.stringify(processor?.query)).toContain('label_values(tg_agent_session_total, processor)');
  });

  it('points every panel, query and query variable at the datasource variable', () => {
    const offenders: string[] = [];
    const isVariable = (ds: unknown) => {
      const ref = ds as { uid?: unknown; type?: unknown } | undefined;
      return ref?.uid === DATASOURCE_VARIABLE && ref.type === 'prometheus';
    };
    for (const panel of allPanels(dashboard.panels)) {
      const where = `panel ${String(panel.id)} "${String(panel.title)}"`;
      if (panel.type === 'row') {
        if (panel.datasource !== undefined && !isVariable(panel.datasource)) offenders.push(where);
        continue;
      }
      if (!isVariable(panel.datasource)) offenders.push(where);
      expect(panel.targets?.length ?? 0, `${where} has no queries`).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) {
        if (!isVariable(target.datasource)) offenders.push(`${where} query ${String(target.refId)}`);
      }
    }
    for (const variable of dashboard.templating.list) {
      if (variable.type === 'query' && !isVariable(variable.datasource)) offenders.push(`variable ${String(variable.name)}`);
    }
    // Only Grafana's built-in annotation may name another datasource: its own.
    for (const annotation of dashboard.annotations?.list ?? []) {
      const ds = annotation.datasource as { type?: unknown } | undefined;
      if (!(annotation.builtIn === 1 && ds?.type === 'grafana') && !isVariable(ds)) offenders.push(`annotation ${String(annotation.name)}`);
    }
    expect(offenders).toEqual([]);
  });

  it('filters every agent metric by the selected processor', () => {
    const unfiltered = dashboardQueries(dashboard)
      .filter(({ where }) => where.startsWith('panel'))
      .filter(({ expr }) => /\btg_/.test(expr) && !expr.includes('processor=~"$processor"'));
    expect(unfiltered).toEqual([]);
  });
});

describe('Grafana dashboard: metric names and labels', () => {
  it('uses only metrics and labels the agent exports', () => {
    expect(checkDashboardMetrics(dashboard, families)).toEqual([]);
  });

  it('covers the operator views the deployment promises', () => {
    const used = new Set(dashboardQueries(dashboard).flatMap(({ expr }) => metricIdentifiers(expr)));
    const resolved = new Set([...used].map((id) => resolveMetric(id, families)).flatMap((r) => (r.ok ? [r.family.name] : [])));
    for (const family of [
      'tg_agent_session_total',
      'tg_agent_iteration_count',
      'tg_agent_llm_duration_seconds',
      'tg_agent_tool_duration_seconds',
      'tg_agent_tool_invocation_total',
      'tg_agent_tool_error_total',
      'tg_agent_tool_group_requests_total',
      'tg_agent_tool_group_availability',
      'tg_agent_state_availability',
      'tg_agent_filtered_tools_count',
      'tg_agent_state_transitions_total',
      'tg_agent_workflow_duration_seconds',
      'tg_agent_group_access_denied_total',
      'tg_agent_privilege_escalation_attempts_total',
      'tg_agent_invalid_state_transition_total',
      'tg_agent_tool_denied_total',
      'tg_agent_argument_validation_failures_total',
      'tg_agent_requests_refused_total',
      'tg_agent_unknown_group_requests_total',
      'tg_agent_groups_withdrawn_total',
      'tg_agent_tools_withdrawn_total',
      'tg_agent_group_fallbacks_total',
      'tg_agent_group_pair_requests_total',
      'tg_agent_tool_offered_total',
      'tg_agent_registry_rebuild_seconds',
      'tg_agent_registry_problems',
      'tg_config_version',
      'tg_consumer_processing_total',
      'tg_consumer_request_duration_seconds',
      'tg_producer_messages_total',
      'process_resident_memory_bytes',
    ]) {
      expect(resolved, family).toContain(family);
    }
    expect([...resolved].some((name) => name.startsWith('nodejs_eventloop_lag'))).toBe(true);
  });
});

describe('dashboard metric checker (test/support/dashboard-metrics.ts)', () => {
  it('extracts metric identifiers with digits and suffixes, not names inside strings or label names', () => {
    expect(
      metricIdentifiers(
        'histogram_quantile(0.95, sum by (le, tool) (rate(tg_agent_tool_duration_seconds_bucket{processor=~"tg_fake_total"}[5m]))) ' +
          '+ nodejs_eventloop_lag_p99_seconds and on (instance) process_resident_memory_bytes # tg_in_comment',
      ),
    ).toEqual(['tg_agent_tool_duration_seconds_bucket', 'nodejs_eventloop_lag_p99_seconds', 'process_resident_memory_bytes']);
  });

  it('resolves histogram series to their family and refuses bare histograms and unknown names', () => {
    expect(resolveMetric('tg_agent_iteration_count_bucket', families)).toMatchObject({ ok: true, suffix: '_bucket' });
    expect(resolveMetric('tg_agent_iteration_count_count', families)).toMatchObject({ ok: true, suffix: '_count' });
    expect(resolveMetric('tg_agent_session_total', families)).toMatchObject({ ok: true, suffix: '' });
    expect(resolveMetric('tg_agent_iteration_count', families)).toMatchObject({ ok: false });
    expect(resolveMetric('tg_agent_session_total_bucket', families)).toMatchObject({ ok: false });
    expect(resolveMetric('tg_agent_sessions_total', families)).toMatchObject({ ok: false });
  });

  it('reports unknown metrics, bare histograms and labels the metrics do not have', () => {
    const P = 'processor=~"$processor"';
    expect(checkExpression(`sum by (outcome) (rate(tg_agent_session_total{${P}}[5m]))`, families)).toEqual([]);
    expect(checkExpression(`rate(tg_agent_sessions_total{${P}}[5m])`, families)).toEqual(['tg_agent_sessions_total is not exported']);
    expect(checkExpression(`rate(tg_agent_llm_duration_seconds{${P}}[5m])`, families)[0]).toContain('is a histogram');
    // TrustGraph's own dashboard groups one panel by a misspelt `tooL`.
    expect(checkExpression(`sum by (tooL) (rate(tg_agent_tool_invocation_total{${P}}[5m]))`, families)).toEqual([
      'no metric in the query has label "tooL"',
    ]);
    // Default process metrics carry the processor label, but no workspace.
    expect(checkExpression(`process_resident_memory_bytes{${P}}`, families)).toEqual([]);
    expect(checkExpression(`process_resident_memory_bytes{workspace="x"}`, families)).toEqual([
      'process_resident_memory_bytes has no label "workspace"',
    ]);
    expect(checkExpression('label_values(tg_agent_session_total, workspace)', families)).toEqual([
      'tg_agent_session_total has no label "workspace"',
    ]);
    expect(checkExpression('vector(1)', families)).toEqual(['uses no tg_/process_/nodejs_ metric']);
  });

  it('finds the queries of collapsed rows and of query variables', () => {
    const board = {
      panels: [{ id: 1, type: 'row', title: 'r', panels: [{ id: 2, title: 'inner', targets: [{ expr: 'tg_x_total' }] }] }],
      templating: { list: [{ type: 'query', name: 'v', query: { query: 'label_values(tg_y_total, a)' } }, { type: 'custom', name: 'c', query: 'a,b' }] },
    };
    expect(dashboardQueries(board)).toEqual([
      { where: 'panel 2 "inner"', expr: 'tg_x_total' },
      { where: 'variable v', expr: 'label_values(tg_y_total, a)' },
    ]);
    expect(checkDashboardMetrics(board, families)).toHaveLength(2);
  });
});
