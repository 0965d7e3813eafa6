/**
 * A flame graph of a V8 CPU profile (`node --cpu-prof`, `bench:iteration --cpu-prof`) as an SVG picture, drawn
 * with vega's `partition` transform: one box per call path, as wide as the CPU time spent in it and in what it
 * called, callers below callees. Idle samples are left out (they are no CPU), so the widths are shares of the
 * time the thread was busy: its JavaScript, the native code it called, the garbage collector.
 *
 *   npm run bench:flame -- <profile.cpuprofile> <out.svg> [title]
 *
 * It also prints the profile's top entries by self time (each function summed over its call paths), as shares of the
 * busy time: the garbage collector is the `(garbage collector)` entry.
 *
 * Frames under MIN_SHARE of the busy time are folded into their caller, so the picture stays readable and small.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import * as vega from 'vega';

/** The parts of a `.cpuprofile` (Chrome DevTools' Profile type) read here. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/** One row of the flame graph's data: a call path, its own time (µs) and what it is. */
interface Frame {
  id: number;
  parent: number | null;
  name: string;
  kind: FrameKind;
  self: number;
  /** Its own time and that of everything it called, µs (the box's width). */
  total: number;
}

type FrameKind = 'tg-agent' | 'dependency' | 'node' | 'native / GC';

const MIN_SHARE = 0.002;
const WIDTH = 1400;
const ROW = 16;

/** What a frame is, for its colour: ours, a dependency's, Node's own JavaScript, or native code and the GC. */
function kindOf(url: string, name: string): FrameKind {
  if (url.includes('node_modules/')) return 'dependency';
  if (url.includes('/src/') || url.includes('/bench/') || url.includes('/dev/')) return 'tg-agent';
  if (url.startsWith('node:') || (url !== '' && !url.includes('/'))) return 'node';
  return name.startsWith('(') || url === '' ? 'native / GC' : 'node';
}

function label(frame: CpuProfile['nodes'][number]['callFrame']): string {
  const name = frame.functionName || '(anonymous)';
  if (frame.url === '') return name;
  const file = frame.url.includes('node_modules/') ? frame.url.slice(frame.url.lastIndexOf('node_modules/') + 13) : basename(frame.url);
  return `${name} ${file}:${frame.lineNumber + 1}`;
}

/** The profile's call tree with each node's own busy time (µs); idle and frames below MIN_SHARE left out or folded. */
export function flameFrames(profile: CpuProfile): { frames: Frame[]; busyMs: number } {
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  }
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const total = new Map<number, number>();
  const sum = (id: number): number => {
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(idle)') return 0;
    let t = self.get(id) ?? 0;
    for (const child of node.children ?? []) t += sum(child);
    total.set(id, t);
    return t;
  };
  const root = profile.nodes[0]!;
  const busy = sum(root.id);
  const frames: Frame[] = [];
  const visit = (id: number, parent: number | null): number => {
    const node = byId.get(id)!;
    let own = self.get(id) ?? 0;
    const name = parent === null ? 'all (busy)' : label(node.callFrame);
    const row: Frame = { id, parent, name, kind: kindOf(node.callFrame.url, node.callFrame.functionName), self: 0, total: total.get(id) ?? 0 };
    frames.push(row);
    for (const child of node.children ?? []) {
      const t = total.get(child) ?? 0;
      if (byId.get(child)!.callFrame.functionName === '(idle)') continue;
      if (t < busy * MIN_SHARE) own += t;
      else visit(child, id);
    }
    row.self = parent === null ? 0 : own;
    return own;
  };
  visit(root.id, null);
  // stratify keeps the input's order among siblings: widest first.
  frames.sort((a, b) => b.total - a.total);
  return { frames, busyMs: busy / 1000 };
}

/** One function's self time summed over every call path it appears on, and its share of the busy time. */
export interface SelfTimeEntry {
  name: string;
  selfMs: number;
  share: number;
}

/** The `count` functions with the most self time (idle left out), largest first. */
export function topSelfTime(profile: CpuProfile, count = 15): SelfTimeEntry[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let busy = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const frame = byId.get(profile.samples[i]!)?.callFrame;
    if (!frame || frame.functionName === '(idle)') continue;
    const us = profile.timeDeltas[i + 1] ?? 0;
    busy += us;
    self.set(label(frame), (self.get(label(frame)) ?? 0) + us);
  }
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, us]) => ({ name, selfMs: us / 1000, share: busy > 0 ? us / busy : 0 }));
}

/** The top entries as lines of text: share, milliseconds, name. */
export function selfTimeLines(entries: readonly SelfTimeEntry[]): string[] {
  return entries.map((e) => `${(e.share * 100).toFixed(1).padStart(5)} %  ${e.selfMs.toFixed(0).padStart(7)} ms  ${e.name}`);
}

/** The SVG text of the flame graph. */
export async function flameGraphSvg(profile: CpuProfile, title: string): Promise<string> {
  const { frames, busyMs } = flameFrames(profile);
  const depth = depthOf(frames);
  const height = (depth + 1) * ROW;
  const spec: vega.Spec = {
    $schema: 'https://vega.github.io/schema/vega/v6.json',
    width: WIDTH,
    height,
    padding: 8,
    title: { text: title, subtitle: `${busyMs.toFixed(0)} ms busy (idle left out); width = CPU time in the frame and what it called`, anchor: 'start' },
    data: [
      {
        name: 'tree',
        values: frames,
        transform: [
          { type: 'stratify', key: 'id', parentKey: 'parent' },
          { type: 'partition', field: 'self', size: [WIDTH, height], as: ['x0', 'y0', 'x1', 'y1', 'depth', 'children'] },
          { type: 'formula', as: 'share', expr: `datum.total / ${busyMs * 1000}` },
        ],
      },
    ],
    scales: [
      {
        name: 'colour',
        type: 'ordinal',
        domain: ['tg-agent', 'dependency', 'node', 'native / GC'],
        range: ['#e8743b', '#f5c342', '#9bc4e2', '#b0b0b0'],
      },
    ],
    legends: [{ fill: 'colour', orient: 'bottom', direction: 'horizontal' }],
    marks: [
      {
        type: 'rect',
        from: { data: 'tree' },
        encode: {
          enter: {
            x: { field: 'x0' },
            x2: { field: 'x1' },
            y: { signal: `${height} - datum.y1` },
            y2: { signal: `${height} - datum.y0 - 1` },
            fill: { scale: 'colour', field: 'kind' },
            stroke: { value: 'white' },
            strokeWidth: { value: 0.5 },
            tooltip: { signal: "datum.name + ' ' + format(datum.share, '.1%')" },
          },
        },
      },
      {
        type: 'text',
        from: { data: 'tree' },
        encode: {
          enter: {
            x: { signal: 'datum.x0 + 3' },
            y: { signal: `${height} - (datum.y0 + datum.y1) / 2` },
            baseline: { value: 'middle' },
            fontSize: { value: 10 },
            font: { value: 'monospace' },
            limit: { signal: 'max(0, datum.x1 - datum.x0 - 6)' },
            text: { signal: "datum.x1 - datum.x0 > 40 ? datum.name + ' ' + format(datum.share, '.1%') : ''" },
          },
        },
      },
    ],
  };
  const view = new vega.View(vega.parse(spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}

function depthOf(frames: readonly Frame[]): number {
  const parent = new Map(frames.map((f) => [f.id, f.parent]));
  let max = 0;
  for (const f of frames) {
    let d = 0;
    for (let p = f.parent; p !== null; p = parent.get(p) ?? null) d++;
    max = Math.max(max, d);
  }
  return max;
}

/** Writes the flame graph of one `.cpuprofile` file. */
export async function writeFlameGraph(profilePath: string, svgPath: string, title = basename(profilePath)): Promise<CpuProfile> {
  const profile = JSON.parse(readFileSync(profilePath, 'utf8')) as CpuProfile;
  writeFileSync(svgPath, await flameGraphSvg(profile, title));
  return profile;
}

/**
 * The flame graph of the profile that process `pid` wrote into `dir` (`--cpu-prof-dir`), as `<svgName>` in the
 * same directory; the SVG's path, or undefined when there is no such profile.
 */
export async function writeFlameGraphOf(dir: string, pid: number, svgName: string, title: string): Promise<string | undefined> {
  const profile = readdirSync(dir).find((name) => name.endsWith('.cpuprofile') && name.includes(`.${pid}.`));
  if (!profile) return undefined;
  const svgPath = join(dir, svgName);
  await writeFlameGraph(join(dir, profile), svgPath, title);
  return svgPath;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [profilePath, svgPath, title] = process.argv.slice(2);
  if (!profilePath || !svgPath) {
    console.error('usage: npm run bench:flame -- <profile.cpuprofile> <out.svg> [title]');
    process.exit(2);
  }
  const profile = await writeFlameGraph(profilePath, svgPath, title);
  console.log(`wrote ${svgPath}\n\ntop by self time (share of the busy time):\n${selfTimeLines(topSelfTime(profile)).join('\n')}`);
}
