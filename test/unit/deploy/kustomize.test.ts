/**
 * deploy/kubernetes as Kubernetes gets it: rendered by the real `kubectl kustomize` (Debian's
 * `kubernetes-client`; `.ci/run` installs it when kubectl is missing; `KUBECTL` names another binary), then
 * read for what a rolling update and a node drain rely on. Without kubectl these tests skip on a developer
 * machine and fail under CI=true.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { freshMetricFamilies } from '../../support/fresh-metrics.js';

const ROOT = join(import.meta.dirname, '../../..');
const KUBECTL = process.env.KUBECTL ?? 'kubectl';
const REQUIRED = process.env.CI === 'true';
const present = spawnSync(KUBECTL, ['version', '--client'], { encoding: 'utf8' }).status === 0;
const withKubectl = it.skipIf(!REQUIRED && !present);

// Anything below is read from kubectl's YAML, so a loose shape is enough; a missing field fails the expectations.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = any;

/** The documents `kubectl kustomize <dir>` renders; fails with kubectl's own message when it refuses the directory. */
function kustomize(dir: string): Doc[] {
  const result = spawnSync(KUBECTL, ['kustomize', join(ROOT, dir)], { encoding: 'utf8' });
  if (result.error) throw new Error(`${KUBECTL} could not run (apt-get install kubernetes-client): ${result.error.message}`);
  expect(result.status, `kubectl kustomize ${dir}: ${result.stderr}`).toBe(0);
  return parseAllDocuments(result.stdout).map((d) => d.toJSON() as Doc).filter((d) => d !== null);
}

const one = (docs: Doc[], kind: string): Doc => {
  const found = docs.filter((d) => d.kind === kind);
  expect(found, `one ${kind}`).toHaveLength(1);
  return found[0];
};

describe('kubectl kustomize deploy/kubernetes', () => {
  withKubectl('renders the agent, its Service, monitoring and a PodDisruptionBudget that keeps a replica subscribed', () => {
    const docs = kustomize('deploy/kubernetes');
    expect(docs.map((d) => d.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'PodDisruptionBudget', 'PrometheusRule', 'Service', 'ServiceMonitor']);
    const deployment = one(docs, 'Deployment');
    const budget = one(docs, 'PodDisruptionBudget');
    expect(budget.apiVersion).toBe('policy/v1');
    expect(deployment.spec.template.metadata.labels).toMatchObject(budget.spec.selector.matchLabels);
    // A drain takes one replica at a time, and one is always left: fewer unavailable than replicas.
    expect(budget.spec.maxUnavailable).toBe(1);
    expect(deployment.spec.replicas).toBeGreaterThan(budget.spec.maxUnavailable);
    expect(deployment.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
  });

  withKubectl('gives a pod its preStop pause, the service\'s --shutdown-grace and time to close before it is killed', () => {
    const docs = kustomize('deploy/kubernetes');
    const pod = one(docs, 'Deployment').spec.template.spec;
    const container = pod.containers[0];
    const preStop: string[] = container.lifecycle.preStop.exec.command;
    expect(preStop[0]).toBe('sleep');
    const pause = Number(preStop[1]);
    const grace = Number(one(docs, 'ConfigMap').data.TG_AGENT_SHUTDOWN_GRACE);
    expect(pause).toBeGreaterThan(0);
    expect(grace).toBeGreaterThan(0);
    // Kubernetes counts the preStop hook inside the termination grace period; 10 s is left to close the broker connections.
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(pause + grace + 10);
  });

  withKubectl('follows the broker with readiness, not liveness, and turns not ready within 10 s', () => {
    const container = one(kustomize('deploy/kubernetes'), 'Deployment').spec.template.spec.containers[0];
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    expect(container.readinessProbe.periodSeconds * container.readinessProbe.failureThreshold).toBeLessThanOrEqual(10);
  });
});

describe('kubectl kustomize deploy/kubernetes/autoscaling', () => {
  withKubectl('scales the agent\'s Deployment on a metric the agent exports, below its concurrency', async () => {
    const hpa = one(kustomize('deploy/kubernetes/autoscaling'), 'HorizontalPodAutoscaler');
    const base = kustomize('deploy/kubernetes');
    const deployment = one(base, 'Deployment');
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata.name });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(deployment.spec.replicas);

    const metric = hpa.spec.metrics[0];
    expect(metric.type).toBe('Pods');
    const values = parseYaml(readFileSync(join(ROOT, 'deploy/kubernetes/autoscaling/prometheus-adapter-values.yaml'), 'utf8')) as Doc;
    const rule = values.rules.custom.find((r: Doc) => r.name.as === metric.pods.metric.name);
    expect(rule, `a prometheus-adapter rule serving ${metric.pods.metric.name}`).toBeDefined();
    const exported = await freshMetricFamilies();
    const used = [...String(rule.metricsQuery).matchAll(/\b(tg_[a-z_]+)\{/g)].map((m) => m[1]!);
    expect(used.length).toBeGreaterThan(0);
    for (const name of [...used, /^(tg_[a-z_]+)/.exec(rule.seriesQuery)![1]!]) expect(exported.has(name), name).toBe(true);
    // The target per pod is a share of the slots each pod has; at or above them a pod is saturated before it scales.
    expect(Number(metric.pods.target.averageValue)).toBeLessThan(Number(one(base, 'ConfigMap').data.TG_AGENT_CONCURRENCY));
  });
});
