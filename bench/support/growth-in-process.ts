/**
 * bench:growth's in-process dimensions, one size per process (bench/growth.ts forks one for each, so each
 * size's heap and RSS are its own): the whole agent (bench/support/reload-agent.ts) takes config answers
 * the way it does from the config service — the answer decoded by the config client's decoder, applied to the
 * workspace store, then `applyConfigChange` (registry rebuilt in time slices, metrics, workflow checks) until
 * the workflow checks have reported.
 *
 * - tools: one workspace of `size` tools. The first load, then `reloads` reloads with every tool changed and
 *   `reloads` with one changed; memory after the first load; the offer time (`registry.filter`, a request
 *   asking 3 of the 20 groups in one of the 8 states), uncached and from the tool-set cache.
 * - workspaces: `size` workspaces of 100 tools each, loaded one after another (the config load), memory, then
 *   `reloads` reloads of one workspace with all of its tools changed.
 *
 * Memory: heap used after a full GC and RSS, with everything loaded, less the same taken before the first load
 * (the agent empty); the encoded answers are dropped before reading it. Event-loop block: the longest delay of
 * a 1 ms timer (perf_hooks.monitorEventLoopDelay) during the reload.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pino } from 'pino';
import { ConfigAnswerDecoder } from '../../src/config/config-answer-decoder.js';
import { WorkspaceConfigStore } from '../../src/config/workspace-config.js';
import type { RequestGroups } from '../../src/groups/selection.js';
import type { ToolRegistry } from '../../src/tools/registry/registry.js';
import { configResponseCodec, makeConfigResponse } from '../../src/wire/index.js';
import { applyTools, reloadableAgent } from './reload-agent.js';
import { quantile, sleep } from './stats.js';
import { GROUPS, pick, random, STATES, syntheticTools } from './tools.js';

export const TOOLS_PER_WORKSPACE = 100;

/** One size's figures: field → number (ms, bytes, ns), as bench/support/charts/growth-chart.ts reads them. */
export type GrowthRow = { size: number } & Record<string, number>;

interface Timed {
  ms: number;
  blockMs: number;
}

/** How long `work` took and the longest the event loop was held meanwhile (1 ms timer resolution). */
async function timed(work: () => Promise<void>): Promise<Timed> {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const started = performance.now();
  await work();
  const ms = performance.now() - started;
  await sleep(20);
  delay.disable();
  return { ms, blockMs: delay.max / 1e6 };
}

function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new TypeError('bench:growth measures heap after a full GC: run it with node --expose-gc (npm run bench:growth does)');
  gc();
  gc();
}

function memory(): { heap: number; rss: number } {
  collect();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, rss: m.rss };
}

/** The agent with its config path: encode an answer (as the config service does), then take it as the agent does. */
async function agentWithConfig() {
  const logger = pino({ level: 'silent' });
  const decoder = new ConfigAnswerDecoder(logger);
  await decoder.warmUp();
  const store = new WorkspaceConfigStore();
  const agent = await reloadableAgent();
  let version = 0;
  const encode = (tools: Record<string, string>): Buffer =>
    configResponseCodec.encode(
      makeConfigResponse({ version: ++version, values: Object.keys(tools).sort().map((key) => ({ type: 'tool', key, value: tools[key]!, workspace: '' })) }),
    );
  const take = async (workspace: string, bytes: Buffer): Promise<void> => {
    const { values, version: answered } = await decoder.values(bytes, `${workspace}\u0000tool`);
    await applyTools(agent.app, workspace, store.apply(workspace, { tool: values }), answered);
  };
  return {
    agent,
    encode,
    take,
    close: async () => {
      await decoder.close();
      await agent.close();
    },
  };
}

/** ns per call of `op`, over at least 200 ms after a warm-up. */
function nsPerCall(op: (i: number) => number): number {
  let sink = 0;
  for (let i = 0; i < 1_000; i++) sink += op(i);
  for (let calls = 1_000; ; calls *= 4) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) sink += op(i);
    const elapsed = Number(process.hrtime.bigint() - started);
    if (elapsed >= 200e6 || sink < 0) return elapsed / calls;
  }
}

/** The offer time: a request asking 3 groups in one state, uncached and cached. */
function offerTime(registry: ToolRegistry): { uncachedNs: number; cachedNs: number; offered: number } {
  const rand = random(7);
  const states = ['undefined', ...STATES];
  const pool: [RequestGroups, string][] = Array.from({ length: 64 }, () => [pick(rand, GROUPS, 3), states[Math.floor(rand() * states.length)]!]);
  const at = (i: number) => pool[i % pool.length]!;
  const uncachedNs = nsPerCall((i) => registry.filter(at(i)[0], at(i)[1], { cache: false }).tools.length);
  const cachedNs = nsPerCall((i) => registry.filter(at(i)[0], at(i)[1]).tools.length);
  const offered = pool.reduce((sum, [groups, state]) => sum + registry.filter(groups, state).tools.length, 0) / pool.length;
  return { uncachedNs, cachedNs, offered };
}

/** `reloads` reloads of `workspace`, each with the answer `next(i)` gives: median time, longest block. */
async function reloadsOf(take: (workspace: string, bytes: Buffer) => Promise<void>, workspace: string, reloads: number, next: (i: number) => Buffer): Promise<Timed> {
  const runs: Timed[] = [];
  for (let i = 0; i < reloads; i++) {
    const bytes = next(i);
    await sleep(100);
    runs.push(await timed(() => take(workspace, bytes)));
  }
  return { ms: quantile(runs.map((r) => r.ms), 0.5), blockMs: Math.max(...runs.map((r) => r.blockMs)) };
}

export async function measureTools(size: number, reloads: number): Promise<GrowthRow> {
  const { agent, encode, take, close } = await agentWithConfig();
  try {
    const before = memory();
    let first: Buffer | undefined = encode(syntheticTools(size));
    const firstLoad = await timed(() => take('main', first!));
    first = undefined;
    const after = memory();
    const offer = offerTime(agent.app.service.registries.get('main'));
    const all = await reloadsOf(take, 'main', reloads, (i) => encode(syntheticTools(size, i + 1)));
    const one = await reloadsOf(take, 'main', reloads, (i) => {
      const tools = syntheticTools(size, reloads);
      tools['tool-00000'] = syntheticTools(1, reloads + i + 1)['tool-00000']!;
      return encode(tools);
    });
    return {
      size,
      firstLoadMs: firstLoad.ms,
      firstLoadBlockMs: firstLoad.blockMs,
      allChangedMs: all.ms,
      allChangedBlockMs: all.blockMs,
      oneChangedMs: one.ms,
      oneChangedBlockMs: one.blockMs,
      heapBytes: after.heap - before.heap,
      rssBytes: after.rss - before.rss,
      heapPerToolBytes: (after.heap - before.heap) / size,
      rssPerToolBytes: (after.rss - before.rss) / size,
      offerUncachedNs: offer.uncachedNs,
      offerCachedNs: offer.cachedNs,
      offered: offer.offered,
    };
  } finally {
    await close();
  }
}

export async function measureWorkspaces(size: number, reloads: number): Promise<GrowthRow> {
  const { encode, take, close } = await agentWithConfig();
  const name = (i: number) => `ws-${String(i).padStart(4, '0')}`;
  try {
    const before = memory();
    let answers: Buffer[] | undefined = Array.from({ length: size }, (_, i) => encode(syntheticTools(TOOLS_PER_WORKSPACE, 0, i + 1)));
    const load = await timed(async () => {
      for (const [i, bytes] of answers!.entries()) await take(name(i), bytes);
    });
    answers = undefined;
    const after = memory();
    const one = await reloadsOf(take, name(0), reloads, (i) => encode(syntheticTools(TOOLS_PER_WORKSPACE, i + 1, 1)));
    return {
      size,
      tools: size * TOOLS_PER_WORKSPACE,
      loadMs: load.ms,
      loadMsPerWorkspace: load.ms / size,
      loadBlockMs: load.blockMs,
      reloadOneMs: one.ms,
      reloadOneBlockMs: one.blockMs,
      heapBytes: after.heap - before.heap,
      rssBytes: after.rss - before.rss,
      heapPerWorkspaceBytes: (after.heap - before.heap) / size,
      rssPerWorkspaceBytes: (after.rss - before.rss) / size,
    };
  } finally {
    await close();
  }
}
