/**
 * The alerting rules (deploy/prometheus/alerts.yml) and the Prometheus configs: checked and unit-tested by the
 * real `promtool` (check rules, check config, test rules on deploy/prometheus/alerts.test.yml), kept identical
 * to the Kubernetes PrometheusRule, and read against the metrics the agent really exports.
 * Without promtool these tests skip on a developer machine and fail under CI=true.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { checkExpression, metricIdentifiers, type MetricFamilies } from '../../support/dashboard-metrics.js';
import { freshMetricFamilies } from '../../support/fresh-metrics.js';
import { PROMETHEUS_REQUIRED, prometheusBinary, promtool } from '../../support/prometheus.js';

const ROOT = join(import.meta.dirname, '../../..');
const PROM_DIR = join(ROOT, 'deploy/prometheus');

interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RuleGroup {
  name: string;
  rules: AlertRule[];
}
interface RuleTest {
  alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[];
}

const yaml = <T>(path: string): T => parseYaml(readFileSync(join(ROOT, path), 'utf8')) as T;
const groups = yaml<{ groups: RuleGroup[] }>('deploy/prometheus/alerts.yml').groups;
const alerts = groups.flatMap((group) => group.rules);

/** Run only when promtool is there, unless CI requires it: then the test runs and fails on the missing binary. */
const withPromtool = it.skipIf(!PROMETHEUS_REQUIRED && prometheusBinary('promtool') === undefined);

describe('promtool on the deployment files', () => {
  withPromtool('check rules: alerts.yml is a valid rule file', () => {
    const { status, output } = promtool(['check', 'rules', 'alerts.yml'], PROM_DIR);
    expect(output).toContain(`SUCCESS: ${alerts.length} rules found`);
    expect(status, output).toBe(0);
  });

  withPromtool('check config: the compose stack config (with its rule file) and the TrustGraph scrape snippet', () => {
    for (const file of ['prometheus.yml', 'scrape-tg-agent.yml']) {
      const { status, output } = promtool(['check', 'config', file], PROM_DIR);
      expect(status, `${file}: ${output}`).toBe(0);
    }
    expect(promtool(['check', 'config', 'prometheus.yml'], PROM_DIR).output).toContain('SUCCESS: 1 rule files found');
  });

  withPromtool('test rules: every case of alerts.test.yml passes', () => {
    const { status, output } = promtool(['test', 'rules', 'alerts.test.yml'], PROM_DIR);
    expect(status, output).toBe(0);
    expect(output).toContain('SUCCESS');
  });
});

describe('alert rules', () => {
  let families: MetricFamilies;
  beforeAll(async () => {
    families = await freshMetricFamilies();
  });

  it('cover what the deployment promises: escalation, denials, invalid states, tool errors, lost requests, down, unready', () => {
    const names = alerts.map((rule) => rule.alert);
    expect(new Set(names).size).toBe(names.length);
    const uses = (metric: string) => alerts.some((rule) => metricIdentifiers(rule.expr).includes(metric));
    for (const metric of [
      'tg_agent_privilege_escalation_attempts_total',
      'tg_agent_group_access_denied_total',
      'tg_agent_tool_denied_total',
      'tg_agent_invalid_state_transition_total',
      'tg_agent_tool_error_total',
      'tg_consumer_processing_total',
      'tg_agent_ready',
    ]) {
      expect(uses(metric), metric).toBe(true);
    }
    expect(alerts.some((rule) => /\bup\{job="tg-agent"\} == 0/.test(rule.expr))).toBe(true);
  });

  it('use only metrics and labels the agent exports', () => {
    const problems = alerts
      .filter((rule) => metricIdentifiers(rule.expr).length > 0)
      .flatMap((rule) => checkExpression(rule.expr, families).map((problem) => `${rule.alert}: ${problem}`));
    expect(problems).toEqual([]);
  });

  it('each have a severity, a summary, a description and a one-line runbook', () => {
    for (const rule of alerts) {
      expect(['critical', 'warning'], rule.alert).toContain(rule.labels?.severity);
      for (const key of ['summary', 'description', 'runbook']) {
        const text = rule.annotations?.[key];
        expect(typeof text === 'string' && text.trim().length > 10, `${rule.alert} ${key}`).toBe(true);
      }
      expect(rule.annotations!.runbook, rule.alert).not.toContain('\n');
    }
  });

  it('each have a promtool case where they fire', () => {
    const tests = yaml<{ tests: RuleTest[] }>('deploy/prometheus/alerts.test.yml').tests;
    const fired = new Set(tests.flatMap((t) => (t.alert_rule_test ?? []).filter((c) => c.exp_alerts.length > 0).map((c) => c.alertname)));
    expect(alerts.map((rule) => rule.alert).filter((name) => !fired.has(name))).toEqual([]);
  });

  it('are the same in the Kubernetes PrometheusRule', () => {
    const rule = yaml<{ kind: string; spec: { groups: RuleGroup[] } }>('deploy/kubernetes/prometheusrule.yaml');
    expect(rule.kind).toBe('PrometheusRule');
    expect(rule.spec.groups).toEqual(groups);
  });
});
