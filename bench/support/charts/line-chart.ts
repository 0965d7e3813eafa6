/**
 * The one kind of chart the benchmarks draw: y against a size, one line per series, points marked. Sizes that
 * grow by 10× (or 8×) get a log x axis; `logY` for values that span several orders of magnitude too.
 */
import type { TopLevelSpec } from 'vega-lite';

export interface LinePoint {
  x: number;
  y: number;
  series: string;
}

export interface LineChart {
  title: string;
  /** A line under the title: the command, the date, the machine's load. */
  subtitle?: string | string[];
  xTitle: string;
  yTitle: string;
  points: readonly LinePoint[];
  logX?: boolean;
  logY?: boolean;
}

export function lineChartSpec(chart: LineChart): TopLevelSpec {
  const xs = [...new Set(chart.points.map((p) => p.x))].sort((a, b) => a - b);
  // The legend in the order the series come, not alphabetical.
  const series = [...new Set(chart.points.map((p) => p.series))];
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: chart.title, ...(chart.subtitle ? { subtitle: chart.subtitle } : {}), anchor: 'start' },
    width: 520,
    height: 280,
    background: 'white',
    data: { values: chart.points.filter((p) => Number.isFinite(p.y)).map((p) => ({ ...p })) },
    mark: { type: 'line', point: true, tooltip: true },
    encoding: {
      x: {
        field: 'x',
        type: 'quantitative',
        title: chart.xTitle,
        scale: chart.logX ? { type: 'log' } : { zero: false },
        axis: { values: xs, format: '~s', grid: true },
      },
      y: { field: 'y', type: 'quantitative', title: chart.yTitle, scale: chart.logY ? { type: 'log' } : { zero: true } },
      color: { field: 'series', type: 'nominal', title: null, scale: { domain: series }, legend: { orient: 'right', labelLimit: 260 } },
    },
  };
}
