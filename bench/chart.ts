/**
 * Redraws a benchmark's charts from its saved JSON, without running it again.
 *
 *   npm run bench:chart -- --from <iteration.json> --out docs/images/iteration.svg
 *   npm run bench:chart -- --from <growth.json> --out docs/images     (one SVG per growth curve)
 *
 * Takes about 1 min (seconds, mostly loading modules).
 *
 * Needs: nothing but this checkout and the saved JSON.
 *
 * Flags: --from <file.json> (what bench:iteration or bench:growth wrote with their json flag)
 *        --out <file.svg> (iteration) or <folder> (growth: one SVG per curve)
 *        --note "<text>" (the iteration chart's subtitle; a growth chart keeps the one in its JSON)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchFlags } from './support/options.js';
import { growthChartSpecs, isGrowthJson, isIterationJson, iterationChartSpec, writeSvg } from './support/charts/index.js';

const flags = benchFlags(import.meta.url);
const from = flags.get('from');
const out = flags.get('out');
if (!from || !out) {
  process.stderr.write('bench:chart needs --from <file.json> and --out <file.svg or folder> (--help prints the usage)\n');
  process.exit(2);
}
const saved: unknown = JSON.parse(readFileSync(from, 'utf8'));
if (isIterationJson(saved)) {
  await writeSvg(out, iterationChartSpec(saved, flags.get('note')));
  console.log(out);
} else if (isGrowthJson(saved)) {
  for (const [name, spec] of growthChartSpecs(saved)) {
    await writeSvg(join(out, name), spec);
    console.log(join(out, name));
  }
} else {
  process.stderr.write(`${from} is neither bench:iteration's nor bench:growth's --json output (its "kind" is neither "iteration" nor "growth")\n`);
  process.exit(2);
}
