/**
 * Renders a vega-lite spec to SVG without a browser or a canvas: vega-lite compiles it to a vega spec, vega's
 * headless View (renderer `none`) draws it as SVG text. Text widths are vega's estimates (no font metrics here).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Renders `spec` into the file `out` (its folder made if missing). */
export async function writeSvg(out: string, spec: TopLevelSpec): Promise<void> {
  const svg = await renderSvg(spec);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${svg}\n`);
}
