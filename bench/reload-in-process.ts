/**
 * `npm run bench:reload -- --in-process-only`: the agent's reload path in this process, without a broker,
 * so the figures show the work and not a loaded machine's scheduling. For each case (first / one / all, as in
 * bench/reload.ts), `--reloads` times: the config answer of `--tools` tools (encoded beforehand, as the config
 * service does) arrives as the transport hands it over — on `websocket`, a WebSocket frame decoded by the
 * frame decoder (a worker for frames this large); on `native`, a payload Buffer — then the config client's
 * decoder takes its values (a worker, and only what changed), the workspace store applies them, and the agent
 * itself takes the change: the whole app (`createAgentApp`, on an in-process bus, not started) applies it
 * through `AgentService.applyConfigChange`, the entry the config watcher uses, so every piece of work a
 * reload does is in the measurement (the registry rebuilt in time slices and swapped, the metrics, the
 * workflow checks, whatever is added later); a reload ends when the workflow checks have reported.
 *
 * Measured on the event-loop thread, during each reload: the longest gap between ticks of a 1 ms timer
 * (wall) and what it was made of (Linux schedstat: the thread's CPU, what the gap would be on an idle
 * machine, and its wait for a core, the machine's scheduling; the rest it slept), the most CPU the
 * event-loop thread used in one gap, and the longest garbage collection pause (PerformanceObserver `gc`;
 * a scavenge or the final pause of a mark-compact).
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { pino } from 'pino';
import { FrameDecoder } from '../src/bus/pulsar/websocket/frame-decoder.js';
import { ConfigAnswerDecoder } from '../src/config/config-answer-decoder.js';
import { WorkspaceConfigStore } from '../src/config/workspace-config.js';
import { configResponseCodec, makeConfigResponse } from '../src/wire/index.js';
import type { ReloadKind } from './support/config-process.js';
import { applyTools, mainThreadClock, reloadableAgent } from './support/reload-agent.js';
import { ms, quantile, table } from './support/stats.js';
import { syntheticTools } from './support/tools.js';

export interface InProcessOptions {
  transport: 'websocket' | 'native';
  tools: number;
  reloads: number;
  cases: readonly ReloadKind[];
}

interface Reading {
  /** The reload's longest gap between ticks of the 1 ms timer, and in it: the thread's CPU, its wait for a core, GC pauses. */
  wallMs: number;
  worstCpuMs: number;
  worstWaitMs: number;
  worstGcMs: number;
  mainCpuMs: number;
  gcMs: number;
  gcKind: string;
  reloadMs: number;
  /** Event-loop thread CPU over the whole reload, ms. */
  reloadCpuMs: number;
}

/** The goal: no block of the event loop longer than this. */
const GOAL_MS = 50;

const GC_KINDS: Record<number, string> = { 1: 'major', 2: 'minor', 4: 'incremental', 8: 'weak callbacks' };

export async function runInProcess(options: InProcessOptions): Promise<{ text: string; readings: Record<string, Reading[]> }> {
  const logger = pino({ level: 'silent' });
  const decoder = new ConfigAnswerDecoder(logger);
  await decoder.warmUp();
  let delivered: ((payload: Buffer) => void) | undefined;
  const frames = new FrameDecoder(logger, (frame) => {
    if ('message' in frame) delivered?.(frame.message.payload);
  });
  await frames.warmUp();
  const store = new WorkspaceConfigStore();
  const agent = await reloadableAgent();

  let revision = 0;
  const current = new Map(Object.entries(syntheticTools(options.tools, revision)));
  const answerOf = (version: number): Buffer =>
    configResponseCodec.encode(
      makeConfigResponse({ version, values: [...current.keys()].sort().map((key) => ({ type: 'tool', key, value: current.get(key)!, workspace: '' })) }),
    );
  /**
   * What the transport receives: a WebSocket frame, or the payload (the native binding hands over a Buffer of
   * its own). Built before the measured window: building a 4.6 MiB frame is the broker's work, not the agent's
   * (JSON.stringify and base64 of it were one ~15 ms block of this benchmark's own on the event loop).
   */
  const wire = (payload: Buffer): Buffer =>
    options.transport === 'native'
      ? Buffer.from(payload)
      : Buffer.from(JSON.stringify({ messageId: 'CAEQADAA', payload: payload.toString('base64'), properties: { id: 'x' }, publishTime: new Date().toISOString(), redeliveryCount: 0 }));
  const hand = (bytes: Buffer): Promise<Buffer> => {
    if (options.transport === 'native') return Promise.resolve(bytes);
    return new Promise((resolve) => {
      delivered = resolve;
      frames.push(bytes);
    });
  };
  let version = 1;
  const reload = async (workspace: string, bytes: Buffer): Promise<void> => {
    const received = await hand(bytes);
    const { values, version: answered } = await decoder.values(received, `${workspace}\u0000tool`);
    await applyTools(agent.app, workspace, store.apply(workspace, { tool: values }), answered);
  };
  // The agent's first load, before any measurement.
  await reload('main', wire(answerOf(version)));

  const clock = mainThreadClock();
  const gcs: { at: number; ms: number; kind: string }[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0;
      gcs.push({ at: entry.startTime, ms: entry.duration, kind: GC_KINDS[kind] ?? String(kind) });
    }
  });
  observer.observe({ entryTypes: ['gc'] });

  const readings: Record<string, Reading[]> = {};
  let fresh = 0;
  for (const kind of options.cases) {
    readings[kind] = [];
    for (let i = 0; i < options.reloads; i++) {
      revision++;
      version++;
      if (kind === 'one') current.set('tool-00000', syntheticTools(1, revision)['tool-00000']!);
      else for (const [key, value] of Object.entries(syntheticTools(options.tools, revision))) current.set(key, value);
      const bytes = wire(answerOf(version));
      let workspace = 'main';
      if (kind === 'first') {
        if (fresh > 0) {
          const gone = `fresh-${fresh}`;
          await agent.app.service.applyWorkspaceDeleted(gone);
          store.delete(gone);
          decoder.forget(`${gone}\u0000tool`);
        }
        workspace = `fresh-${++fresh}`;
      }
      // Let the garbage of the encoding go before measuring.
      await new Promise((resolve) => setTimeout(resolve, 200));
      let worst = { wallMs: 0, cpuMs: 0, waitMs: 0, from: 0, to: 0 };
      let mainCpuMs = 0;
      let last = performance.now();
      let lastClock = clock();
      const timer = setInterval(() => {
        const now = performance.now();
        const used = clock();
        const gap = { wallMs: now - last - 1, cpuMs: used.cpuMs - lastClock.cpuMs, waitMs: used.waitMs - lastClock.waitMs, from: last, to: now };
        if (gap.wallMs > worst.wallMs) worst = gap;
        if (gap.cpuMs > mainCpuMs) mainCpuMs = gap.cpuMs;
        last = now;
        lastClock = used;
      }, 1);
      const started = performance.now();
      const cpuBefore = clock().cpuMs;
      const gcFrom = gcs.length;
      await reload(workspace, bytes);
      const reloadMs = performance.now() - started;
      const reloadCpuMs = clock().cpuMs - cpuBefore;
      await new Promise((resolve) => setTimeout(resolve, 50));
      clearInterval(timer);
      const pauses = gcs.slice(gcFrom);
      const longest = pauses.reduce((a, b) => (b.ms > a.ms ? b : a), { ms: 0, kind: '–', at: 0 });
      const inWorst = pauses.filter((p) => p.at < worst.to && p.at + p.ms > worst.from).reduce((sum, p) => sum + Math.min(worst.to, p.at + p.ms) - Math.max(worst.from, p.at), 0);
      readings[kind].push({ wallMs: worst.wallMs, worstCpuMs: worst.cpuMs, worstWaitMs: worst.waitMs, worstGcMs: inWorst, mainCpuMs, gcMs: longest.ms, gcKind: longest.kind, reloadMs, reloadCpuMs });
    }
  }
  observer.disconnect();
  await decoder.close();
  await agent.close();

  const rows = options.cases.map((kind) => {
    const r = readings[kind]!;
    const max = (f: (x: Reading) => number): number => Math.max(...r.map(f));
    const longestGc = r.reduce((a, b) => (b.gcMs > a.gcMs ? b : a));
    const worst = r.reduce((a, b) => (b.wallMs > a.wallMs ? b : a));
    const slept = Math.max(0, worst.wallMs - worst.worstCpuMs - worst.worstWaitMs);
    return [
      kind,
      String(r.length),
      String(r.filter((x) => x.wallMs > GOAL_MS).length),
      ms(worst.wallMs, 1),
      ms(quantile(r.map((x) => x.wallMs), 0.99), 1),
      ms(quantile(r.map((x) => x.wallMs), 0.5), 1),
      `CPU ${ms(worst.worstCpuMs, 1)} + wait ${ms(worst.worstWaitMs, 1)} + slept ${ms(slept, 1)} (GC ${ms(worst.worstGcMs, 1)})`,
      ms(max((x) => x.mainCpuMs), 1),
      `${ms(longestGc.gcMs, 1)} (${longestGc.gcKind})`,
      ms(quantile(r.map((x) => x.reloadMs), 0.5), 0),
      ms(quantile(r.map((x) => x.reloadCpuMs), 0.5), 0),
    ];
  });
  const text = table(
    [
      'case',
      'reloads',
      `longest block > ${GOAL_MS} ms`,
      'worst',
      'p99',
      'median',
      'the worst block: event-loop thread CPU + wait for a core + slept (GC in it)',
      'most event-loop thread CPU in one block',
      'longest GC pause',
      'reload time (median)',
      'event-loop thread CPU per reload (median)',
    ],
    rows,
  );
  return { text, readings };
}
