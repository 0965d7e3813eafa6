/**
 * Cost of choosing a request's tools (TG-19 (docs/requirements.md), design decision 4 (docs/design.md)), and of rebuilding a registry.
 *
 *   npx tsx bench/filter.ts        (npm run bench:filter)
 *
 * Takes about 1 min; no broker, no load wait.
 *
 * Needs: nothing but this checkout.
 *
 * Synthetic workspaces of 10 … 10 000 tools: 20 groups, 8 states, each tool in 1–3 groups and listing
 * 0–3 states (0 = every state), a state target on a third of them. Requests ask for 1–5 groups in one
 * of the 8 states (or "undefined"). "uncached" bypasses the tool-set cache (`{cache: false}`); "cached"
 * cycles through requests that are all in the cache. Prints a markdown table.
 */
import { buildRegistry, type ToolRegistry } from '../src/tools/registry/registry.js';
import type { RequestGroups } from '../src/groups/selection.js';
import { GROUPS, pick, random, STATES, syntheticTools } from './support/tools.js';
import { benchFlags } from './support/options.js';

// No flags: --help prints the usage above, anything else is refused.
benchFlags(import.meta.url);

const SIZES = [10, 100, 1_000, 10_000];
const GROUP_COUNTS = [1, 2, 3, 4, 5];
const REQUESTS_PER_RUN = 64; // fits the default cache (128 entries)
const MIN_SAMPLE_NS = 250_000_000n;

function requests(groupCount: number, seed: number): [RequestGroups, string][] {
  const rand = random(seed);
  const states = ['undefined', ...STATES];
  return Array.from({ length: REQUESTS_PER_RUN }, () => [pick(rand, GROUPS, groupCount), states[Math.floor(rand() * states.length)]!]);
}

let sink = 0;

/** Nanoseconds per call of `op`, measured over at least MIN_SAMPLE_NS after a warm-up. */
function measure(op: (i: number) => number): number {
  for (let i = 0; i < 2_000; i++) sink += op(i);
  let iterations = 1_000;
  for (;;) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) sink += op(i);
    const elapsed = process.hrtime.bigint() - start;
    if (elapsed >= MIN_SAMPLE_NS) return Number(elapsed) / iterations;
    iterations *= elapsed === 0n ? 10 : Math.min(10, Math.ceil(Number(MIN_SAMPLE_NS) / Number(elapsed)) + 1);
  }
}

const formatNs = (ns: number): string => (ns >= 10_000 ? `${(ns / 1_000).toFixed(1)} µs` : `${ns.toFixed(0)} ns`);
const formatOps = (ns: number): string => Math.round(1e9 / ns).toLocaleString('en-US');

function benchFilter(registry: ToolRegistry, groupCount: number): { uncached: number; cached: number; offered: number } {
  const pool = requests(groupCount, 1000 + groupCount);
  const next = (i: number) => pool[i % pool.length]!;
  const uncached = measure((i) => {
    const [groups, state] = next(i);
    return registry.filter(groups, state, { cache: false }).tools.length;
  });
  for (const [groups, state] of pool) registry.filter(groups, state);
  const cached = measure((i) => {
    const [groups, state] = next(i);
    return registry.filter(groups, state).tools.length;
  });
  const offered = pool.reduce((sum, [groups, state]) => sum + registry.filter(groups, state).tools.length, 0) / pool.length;
  return { uncached, cached, offered };
}

function benchRebuild(tools: Record<string, string>): number {
  const runs = Object.keys(tools).length >= 10_000 ? 5 : 20;
  buildRegistry({ workspace: 'bench', version: 0, tools }); // warm-up
  const start = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) sink += buildRegistry({ workspace: 'bench', version: i, tools }).registry.tools.length;
  return Number(process.hrtime.bigint() - start) / runs;
}

function main(): void {
  console.log(`Node ${process.version}, ${process.platform}/${process.arch}\n`);
  console.log('| tools | groups asked | offered (avg) | uncached | uncached ops/s | cached | cached ops/s |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|');
  const rebuilds: [number, number][] = [];
  for (const size of SIZES) {
    const tools = syntheticTools(size);
    const { registry, problems } = buildRegistry({ workspace: 'bench', version: 1, tools });
    if (problems.length > 0) throw new Error(`benchmark config has problems: ${problems[0]!.text}`);
    for (const groupCount of GROUP_COUNTS) {
      const { uncached, cached, offered } = benchFilter(registry, groupCount);
      console.log(
        `| ${size.toLocaleString('en-US')} | ${groupCount} | ${offered.toFixed(1)} | ${formatNs(uncached)} | ${formatOps(uncached)} | ` +
          `${formatNs(cached)} | ${formatOps(cached)} |`,
      );
    }
    rebuilds.push([size, benchRebuild(tools)]);
  }
  console.log('\n| tools | full rebuild (parse + validate + index) | per tool |');
  console.log('|---:|---:|---:|');
  for (const [size, ns] of rebuilds) {
    console.log(`| ${size.toLocaleString('en-US')} | ${(ns / 1e6).toFixed(2)} ms | ${formatNs(ns / size)} |`);
  }
  if (sink === -1) console.log(sink); // keeps the measured work observable
}

main();
