/**
 * The step table of bench/reload.ts: the work the agent does on a reload, step by step, in this process (same
 * code, same payload), each the event-loop thread's CPU (what it would take on an idle machine; median of 5
 * after a warm-up) beside its wall time. Then the whole reload as the agent does it, after the decode: a
 * workspace of all the tools applied through `AgentService.applyConfigChange` of the whole app, until its
 * workflow checks have reported. The difference between the whole and the named steps is a row of its own:
 * a piece of work added to the reload later shows up there even before it gets a step of its own.
 */
import { WorkspaceConfigStore } from '../../src/config/workspace-config.js';
import { AgentMetrics } from '../../src/observability/metrics.js';
import { buildRegistry } from '../../src/tools/registry/registry.js';
import { configResponseCodec, makeConfigResponse } from '../../src/wire/index.js';
import { lintWorkflow } from '../../src/workflow/workflow-lint.js';
import { applyTools, mainThreadCpuMs, reloadableAgent } from './reload-agent.js';
import { ms, quantile } from './stats.js';
import { syntheticTools } from './tools.js';
import { LOOKUP_TOOL } from './workload.js';

const RUNS = 5;

interface Timed {
  readonly cpuMs: number;
  readonly wallMs: number;
}

/** Median event-loop thread CPU and wall time (ms) of `fn` over `RUNS` runs after one warm-up. */
function timeIt(fn: () => unknown, cpu: () => number): Timed {
  fn();
  const cpus: number[] = [];
  const walls: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const [started, startedCpu] = [performance.now(), cpu()];
    fn();
    walls.push(performance.now() - started);
    cpus.push(cpu() - startedCpu);
  }
  return { cpuMs: quantile(cpus, 0.5), wallMs: quantile(walls, 0.5) };
}

/** The same for the whole reload: a new workspace of all the tools each time (as on a first load), the previous one deleted. */
async function timeWholeReload(tools: Record<string, string>, cpu: () => number): Promise<Timed> {
  const agent = await reloadableAgent();
  const snapshot = new WorkspaceConfigStore().apply('bench', { tool: Object.freeze({ ...tools }) });
  const cpus: number[] = [];
  const walls: number[] = [];
  try {
    for (let i = 0; i <= RUNS; i++) {
      const [started, startedCpu] = [performance.now(), cpu()];
      await applyTools(agent.app, `bench-${i}`, snapshot, i + 2);
      if (i > 0) {
        walls.push(performance.now() - started);
        cpus.push(cpu() - startedCpu);
      }
      await agent.app.service.applyWorkspaceDeleted(`bench-${i}`);
    }
  } finally {
    await agent.close();
  }
  return { cpuMs: quantile(cpus, 0.5), wallMs: quantile(walls, 0.5) };
}

export interface ReloadSteps {
  readonly rows: string[][];
  readonly payloadBytes: number;
  readonly frameBytes: number;
  /** Event-loop thread CPU of the named steps of the agent, summed. */
  readonly totalMs: number;
}

export async function reloadSteps(toolCount: number): Promise<ReloadSteps> {
  const cpu = mainThreadCpuMs();
  const tools: Record<string, string> = { lookup: JSON.stringify(LOOKUP_TOOL), ...syntheticTools(toolCount, 1) };
  const values = Object.keys(tools)
    .sort()
    .map((key) => ({ type: 'tool', key, value: tools[key]!, workspace: '' }));
  let payload: Buffer = Buffer.alloc(0);
  const encoded = timeIt(() => (payload = configResponseCodec.encode(makeConfigResponse({ version: 2, values }))), cpu);
  const frameText = JSON.stringify({ messageId: 'CAEQADAA', payload: payload.toString('base64'), properties: { id: 'x' }, publishTime: new Date().toISOString(), redeliveryCount: 0 });
  const frameBytes = Buffer.from(frameText, 'utf8');
  const response = configResponseCodec.decode(payload);
  const registry = buildRegistry({ workspace: 'bench', tools, toolServices: {}, version: 2 }).registry;
  const metrics = new AgentMetrics('bench', { defaultMetrics: false });
  // Two builds of the same tools: each replaces the other, so the hook counts every name in and out (the same
  // registry again, or a patched one, takes its shortcut).
  const registries = [2, 3].map((version) => buildRegistry({ workspace: 'bench', tools, toolServices: {}, version }).registry);
  let turn = 0;
  const frozenTools = Object.freeze({ ...tools });
  const steps: [string, () => unknown][] = [
    ['WebSocket frame bytes → string (utf8)', () => frameBytes.toString('utf8')],
    ['frame JSON.parse + base64 → payload Buffer', () => Buffer.from((JSON.parse(frameText) as { payload: string }).payload, 'base64')],
    ['configResponseCodec.decode (JSON.parse + zod, all values)', () => configResponseCodec.decode(payload)],
    ['… of which JSON.parse of the payload alone', () => JSON.parse(payload.toString('utf8'))],
    [
      'ConfigClient.values: values → key map',
      () => {
        const out: Record<string, string> = Object.create(null) as Record<string, string>;
        for (const v of response.values ?? []) if (v.key !== null && v.key !== undefined) out[v.key] = v.value ?? '';
        return out;
      },
    ],
    // The config client's values come frozen, and the store keeps them as they are.
    ['WorkspaceConfigStore.apply (the workspace snapshot)', () => new WorkspaceConfigStore().apply('bench', { tool: frozenTools })],
    ['buildRegistry (parse + validate + index every tool)', () => buildRegistry({ workspace: 'bench', tools, toolServices: {}, version: 2 })],
    ["AgentMetrics.registryRebuilt (the telemetry's registryRebuilt; two registries built from scratch in turn)", () => metrics.registryRebuilt(registries[turn++ % 2]!, 0.1)],
    ['lintWorkflow (the workflow checks, run to the end here; in slices in the agent)', () => lintWorkflow(registry, undefined)],
  ];
  const rows: string[][] = [];
  let total = 0;
  let totalWall = 0;
  for (const [name, fn] of steps) {
    const took = timeIt(fn, cpu);
    if (!name.startsWith('…')) {
      total += took.cpuMs;
      totalWall += took.wallMs;
    }
    rows.push([name, ms(took.cpuMs, 1), ms(took.wallMs, 1)]);
  }
  rows.push(['**sum of the steps** (the decode runs in worker threads in the agent; the rest in time slices)', `**${ms(total, 1)}**`, `**${ms(totalWall, 1)}**`]);
  const whole = await timeWholeReload(tools, cpu);
  const afterDecode = ['WorkspaceConfigStore.apply', 'buildRegistry', 'AgentMetrics.registryRebuilt', 'lintWorkflow'];
  const named = rows.filter(([name]) => afterDecode.some((prefix) => name!.startsWith(prefix)));
  const namedCpu = named.reduce((sum, [, cpuText]) => sum + Number.parseFloat(cpuText!), 0);
  rows.push([
    'the whole reload after the decode, as the agent does it (AgentService.applyConfigChange of the whole app, a new workspace, registry built in slices, until the workflow checks report)',
    ms(whole.cpuMs, 1),
    ms(whole.wallMs, 1),
  ]);
  rows.push(['… of it in none of the steps above (slicing, logging, the listing, anything added to a reload later)', ms(whole.cpuMs - namedCpu, 1), '']);
  rows.push(['(config service side, not the agent: configResponseCodec.encode of the answer)', ms(encoded.cpuMs, 1), ms(encoded.wallMs, 1)]);
  return { rows, payloadBytes: payload.length, frameBytes: frameBytes.length, totalMs: total };
}
