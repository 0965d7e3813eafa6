/**
 * The benchmarks' charts: vega-lite specs rendered to SVG headless, from the JSON bench:iteration and bench:growth
 * write, and `npm run bench:chart` redrawing them from a saved file.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { growthChartSpecs, GROWTH_CURVES, iterationChartSpec, renderSvg, type GrowthRunJson, type IterationRunJson } from '../../../bench/support/charts/index.js';

const iteration: IterationRunJson = {
  kind: 'iteration',
  runs: [
    { kind: 'native', results: [{ concurrency: 1, conversationsPerSecond: 213 }, { concurrency: 8, conversationsPerSecond: 390 }, { concurrency: 64, conversationsPerSecond: 512 }] },
    { kind: 'kafka', results: [{ concurrency: 1, conversationsPerSecond: 69 }, { concurrency: 64, conversationsPerSecond: 166 }] },
  ],
  trustGraph: [{ kind: 'native', results: [{ concurrency: 1, conversationsPerSecond: 4.5 }, { concurrency: 64, conversationsPerSecond: 9.75 }] }],
};

const growth: GrowthRunJson = {
  kind: 'growth',
  dimension: 'tools',
  note: '2026-12-07, commit abc1234, npm run bench:growth -- --dimension tools',
  rows: [10, 100, 1000].map((size) => ({ size, firstLoadMs: size / 7, heapBytes: size * 2048, rssBytes: size * 4096, offerUncachedNs: size * 30, offerCachedNs: 500 })),
};

const texts = (svg: string): string[] => [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!);

describe('the iteration chart', () => {
  it('draws one line per transport and one per TrustGraph run, on a log concurrency axis', async () => {
    const svg = await renderSvg(iterationChartSpec(iteration, 'a note'));
    expect(svg.startsWith('<svg')).toBe(true);
    const labels = texts(svg);
    expect(labels).toEqual(expect.arrayContaining(['tg-agent (Pulsar, native)', 'tg-agent (Kafka)', "TrustGraph's agent (Pulsar)", 'a note']));
    // The concurrencies measured are the axis' ticks.
    expect(labels).toEqual(expect.arrayContaining(['1', '8', '64']));
    // One line per series: three paths of the line mark.
    expect((svg.match(/<path[^>]*aria-roledescription="line mark"/g) ?? []).length).toBe(3);
  });

  it('refuses a run with nothing measured, saying why', () => {
    expect(() => iterationChartSpec({ kind: 'iteration', runs: [], trustGraph: [] })).toThrow(/no measured run/);
  });
});

describe('the growth charts', () => {
  it('draw one chart per curve of the dimension, each named for it, the note as subtitle', async () => {
    const specs = growthChartSpecs(growth);
    expect(specs.map(([name]) => name)).toEqual(GROWTH_CURVES.tools.curves.map((curve) => `growth-tools-${curve.name}.svg`));
    const memory = await renderSvg(specs.find(([name]) => name === 'growth-tools-memory.svg')![1]);
    expect(texts(memory)).toEqual(expect.arrayContaining(['heap used after GC', 'RSS', growth.note, 'MiB']));
  });
});

describe('npm run bench:chart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-chart-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const run = (...args: string[]): Promise<{ status: number; stderr: string }> =>
    new Promise((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', 'bench/chart.ts', ...args], { encoding: 'utf8', timeout: 60_000 }, (error, _stdout, stderr) =>
        resolve({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stderr }),
      );
    });

  it('redraws the iteration chart and the growth charts from saved JSON', async () => {
    writeFileSync(join(dir, 'iteration.json'), JSON.stringify({ ...iteration, inProcess: [] }));
    writeFileSync(join(dir, 'growth.json'), JSON.stringify(growth));
    const [one, many] = await Promise.all([
      run('--from', join(dir, 'iteration.json'), '--out', join(dir, 'iteration.svg'), '--note', 'redrawn'),
      run('--from', join(dir, 'growth.json'), '--out', join(dir, 'growth')),
    ]);
    expect(one).toEqual({ status: 0, stderr: '' });
    expect(texts(readFileSync(join(dir, 'iteration.svg'), 'utf8'))).toContain('redrawn');
    expect(many).toEqual({ status: 0, stderr: '' });
    expect(readdirSync(join(dir, 'growth')).sort()).toEqual(GROWTH_CURVES.tools.curves.map((curve) => `growth-tools-${curve.name}.svg`).sort());
  }, 90_000);

  it('refuses a JSON file no benchmark wrote, naming it', async () => {
    writeFileSync(join(dir, 'other.json'), JSON.stringify({ kind: 'soak', samples: [] }));
    const refused = await run('--from', join(dir, 'other.json'), '--out', join(dir, 'x.svg'));
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain(`${join(dir, 'other.json')} is neither bench:iteration's nor bench:growth's`);
  }, 90_000);
});
