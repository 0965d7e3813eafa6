/**
 * bench:growth's pictures: one chart per growth curve of a dimension (tools, workspaces, conversations in flight),
 * drawn from the run's JSON (`--json`), so a saved run can be redrawn (`npm run bench:chart`). Sizes grow by about
 * 10× per step, so both axes are logarithmic: a straight line of slope 1 is linear growth, steeper is worse.
 */
import type { TopLevelSpec } from 'vega-lite';
import { lineChartSpec, type LinePoint } from './line-chart.js';

export type GrowthDimension = 'tools' | 'workspaces' | 'conversations';

/** The part of bench:growth's `--json` the charts read: one row per size, each measure a number field. */
export interface GrowthRunJson {
  kind: 'growth';
  dimension: GrowthDimension;
  /** When, at which commit, with which command: the charts' subtitle. */
  note: string;
  rows: ({ size: number } & Record<string, number>)[];
}

/** One curve's chart: which fields of the rows it draws, under which names. */
export interface GrowthCurve {
  /** The SVG's name: `growth-<dimension>-<name>.svg`. */
  name: string;
  title: string;
  yTitle: string;
  series: { field: string; label: string; scale?: number }[];
}

const MIB = 1 / 1048576;
const KIB = 1 / 1024;

export const GROWTH_CURVES: Record<GrowthDimension, { xTitle: string; curves: GrowthCurve[] }> = {
  tools: {
    xTitle: 'tools in the workspace',
    curves: [
      {
        name: 'reload-time',
        title: 'Reload time against tools',
        yTitle: 'ms',
        series: [
          { field: 'firstLoadMs', label: 'first load' },
          { field: 'allChangedMs', label: 'all changed (median)' },
          { field: 'oneChangedMs', label: 'one changed (median)' },
        ],
      },
      {
        name: 'event-loop-block',
        title: 'Longest event-loop block during a reload against tools',
        yTitle: 'ms',
        series: [
          { field: 'firstLoadBlockMs', label: 'first load' },
          { field: 'allChangedBlockMs', label: 'all changed (longest)' },
          { field: 'oneChangedBlockMs', label: 'one changed (longest)' },
        ],
      },
      {
        name: 'memory',
        title: 'Memory against tools (the workspace loaded, over the empty agent)',
        yTitle: 'MiB',
        series: [
          { field: 'heapBytes', label: 'heap used after GC', scale: MIB },
          { field: 'rssBytes', label: 'RSS', scale: MIB },
        ],
      },
      {
        name: 'offer-time',
        title: "Offer time (choosing a request's tools) against tools",
        yTitle: 'µs per request',
        series: [
          { field: 'offerUncachedNs', label: 'uncached', scale: 1e-3 },
          { field: 'offerCachedNs', label: 'cached', scale: 1e-3 },
        ],
      },
    ],
  },
  workspaces: {
    xTitle: 'workspaces (100 tools each)',
    curves: [
      {
        name: 'load-time',
        title: 'Config load time against workspaces',
        yTitle: 'ms',
        series: [
          { field: 'loadMs', label: 'every workspace loaded' },
          { field: 'loadBlockMs', label: 'longest event-loop block' },
        ],
      },
      {
        name: 'reload-one',
        title: 'Reload of one workspace (all its tools changed) against workspaces',
        yTitle: 'ms',
        series: [
          { field: 'reloadOneMs', label: 'reload time (median)' },
          { field: 'reloadOneBlockMs', label: 'longest event-loop block' },
        ],
      },
      {
        name: 'memory',
        title: 'Memory against workspaces (over the empty agent)',
        yTitle: 'MiB',
        series: [
          { field: 'heapBytes', label: 'heap used after GC', scale: MIB },
          { field: 'rssBytes', label: 'RSS', scale: MIB },
        ],
      },
    ],
  },
  conversations: {
    xTitle: 'conversations in flight (--concurrency)',
    curves: [
      {
        name: 'latency',
        title: 'Conversation latency against conversations in flight',
        yTitle: 'ms',
        series: [
          { field: 'p50Ms', label: 'p50' },
          { field: 'p99Ms', label: 'p99' },
        ],
      },
      {
        name: 'memory-per-conversation',
        title: 'Memory per conversation in flight',
        yTitle: 'KiB per conversation',
        series: [
          { field: 'heapPerConversationBytes', label: 'heap used after GC', scale: KIB },
          { field: 'rssPerConversationBytes', label: 'RSS', scale: KIB },
        ],
      },
      {
        name: 'cpu-per-iteration',
        title: 'Agent CPU per iteration against conversations in flight',
        yTitle: 'ms per iteration',
        series: [
          { field: 'cpuMsPerIteration', label: 'agent CPU' },
          { field: 'eventLoopMsPerIteration', label: 'event loop' },
        ],
      },
    ],
  },
};

export function isGrowthJson(value: unknown): value is GrowthRunJson {
  const v = value as Partial<GrowthRunJson> | null;
  return v?.kind === 'growth' && typeof v.dimension === 'string' && v.dimension in GROWTH_CURVES && Array.isArray(v.rows);
}

/** One chart per curve of the run's dimension: `[file name, spec]`. */
export function growthChartSpecs(run: GrowthRunJson): [string, TopLevelSpec][] {
  const { xTitle, curves } = GROWTH_CURVES[run.dimension];
  return curves.map((curve) => {
    const points: LinePoint[] = curve.series.flatMap((s) =>
      run.rows.filter((row) => row[s.field]! > 0).map((row) => ({ x: row.size, y: row[s.field]! * (s.scale ?? 1), series: s.label })),
    );
    return [`growth-${run.dimension}-${curve.name}.svg`, lineChartSpec({ title: curve.title, subtitle: run.note, xTitle, yTitle: curve.yTitle, points, logX: true, logY: true })];
  });
}
