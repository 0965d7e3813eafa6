/** The benchmarks' charts: vega-lite specs rendered to SVG headless (render.ts), for bench:growth and bench:iteration. */
export { renderSvg, writeSvg } from './render.js';
export { runNote, shownFlags } from './note.js';
export { lineChartSpec, type LineChart, type LinePoint } from './line-chart.js';
export { iterationChartSpec, isIterationJson, type IterationRunJson } from './iteration-chart.js';
export { growthChartSpecs, GROWTH_CURVES, isGrowthJson, type GrowthCurve, type GrowthDimension, type GrowthRunJson } from './growth-chart.js';
