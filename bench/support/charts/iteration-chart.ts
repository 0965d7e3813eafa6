/**
 * bench:iteration's picture: conversations/s against concurrency, one line per backend and transport tg-agent
 * ran on, and TrustGraph's agent on each backend it ran on beside them (dashed). Drawn from the run's JSON
 * (`--json`), so a saved run can be redrawn (`npm run bench:chart`).
 */
import type { TopLevelSpec } from 'vega-lite';
import { lineChartSpec, type LinePoint } from './line-chart.js';

/** The part of bench:iteration's `--json` the chart reads. */
export interface IterationRunJson {
  kind: 'iteration';
  runs: { kind: string; results: { concurrency: number; conversationsPerSecond: number }[] }[];
  trustGraph: { kind: string; results: { concurrency: number; conversationsPerSecond: number }[] }[];
}

const BACKENDS: Record<string, string> = { websocket: 'Pulsar, WebSocket', native: 'Pulsar, native', kafka: 'Kafka', rabbitmq: 'RabbitMQ' };
const backendOf = (kind: string): string => (kind === 'kafka' ? 'Kafka' : kind === 'rabbitmq' ? 'RabbitMQ' : 'Pulsar');

export function isIterationJson(value: unknown): value is IterationRunJson {
  const v = value as Partial<IterationRunJson> | null;
  return v?.kind === 'iteration' && Array.isArray(v.runs) && Array.isArray(v.trustGraph);
}

export function iterationChartSpec(run: IterationRunJson, subtitle?: string): TopLevelSpec {
  const points: LinePoint[] = [
    ...run.runs.flatMap((r) => r.results.map((x) => ({ x: x.concurrency, y: x.conversationsPerSecond, series: `tg-agent (${BACKENDS[r.kind] ?? r.kind})` }))),
    ...run.trustGraph.flatMap((r) => r.results.map((x) => ({ x: x.concurrency, y: x.conversationsPerSecond, series: `TrustGraph's agent (${backendOf(r.kind)})` }))),
  ];
  if (points.length === 0) throw new TypeError('the iteration JSON has no measured run to draw (was it an --in-process-only or --soak run?)');
  const spec = lineChartSpec({
    title: 'Conversations per second against concurrency',
    ...(subtitle ? { subtitle } : {}),
    xTitle: 'concurrency (conversations in flight)',
    yTitle: 'conversations/s',
    points,
    logX: true,
  }) as TopLevelSpec & { encoding: Record<string, unknown> };
  // TrustGraph's agent dashed, so the two agents read apart at a glance even where colours are close.
  spec.encoding.strokeDash = {
    field: 'agent',
    type: 'nominal',
    title: null,
    scale: { domain: ['tg-agent', "TrustGraph's agent"], range: [[1, 0], [5, 3]] },
    legend: null,
  };
  (spec as { transform?: unknown[] }).transform = [{ calculate: "indexof(datum.series, 'tg-agent') === 0 ? 'tg-agent' : \"TrustGraph's agent\"", as: 'agent' }];
  return spec;
}
