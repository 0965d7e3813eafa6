/**
 * The metric families a fresh agent exports (an `AgentMetrics` registry after one registry rebuild, so the
 * per-group, per-state and per-tool series exist), for checking PromQL — the Grafana dashboard's, the alert
 * rules' — against the real names and labels without running the agent.
 */
import { AgentMetrics } from '../../src/observability/metrics.js';
import { buildRegistry } from '../../src/tools/registry/registry.js';
import { parseExposition, type MetricFamilies } from './dashboard-metrics.js';

/** A scrape of a fresh registry, with label names completed from the metric declarations. */
export async function freshMetricFamilies(): Promise<MetricFamilies> {
  const metrics = new AgentMetrics('agent-manager');
  const { registry } = buildRegistry({
    workspace: 'default',
    version: 3,
    tools: {
      search: JSON.stringify({ type: 'knowledge-query', name: 'search', group: ['research'], 'applicable-states': ['undefined'], state: 'analysis' }),
      summarise: JSON.stringify({ type: 'text-completion', name: 'summarise', group: ['research', 'writing'], 'applicable-states': ['analysis'] }),
    },
  });
  const names = registry.tools.map((t) => t.name).sort();
  if (names.join() !== 'search,summarise') throw new Error(`the sample tool config did not load: got tools ${names.join(', ')}`);
  metrics.registryRebuilt(registry, 0.002);
  const scraped = parseExposition((await metrics.scrape()).body);
  // Histograms nobody observed yet have no samples; their label names come from the declarations.
  for (const metric of metrics.registry.getMetricsAsArray()) {
    const family = scraped.get(metric.name);
    const declared = (metric as unknown as { labelNames?: readonly string[] }).labelNames;
    if (!family || !declared) continue;
    declared.forEach((label) => family.labels.add(label));
    family.labelsKnown = true;
  }
  return scraped;
}
