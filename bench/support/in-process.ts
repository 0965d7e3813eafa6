/**
 * The agent's own cost per iteration with the transport taken away: the real app (src/app.ts: service,
 * metrics, audit log at info level into a file, security gate) on the in-process MemoryTransport, with the
 * same config, prompt and MCP stand-ins and gateway as on the broker — all in this process. A hop on the
 * memory bus is a setImmediate, so a conversation's latency is the agent's two iterations plus a few µs;
 * the process's CPU time per iteration is the agent's plus the (lean) stand-ins' and gateway's.
 */
import { pino } from 'pino';
import { createAgentApp } from '../../src/app.js';
import { MemoryTransport } from '../../src/bus/memory/memory-transport.js';
import { SettingsSchema, type Settings } from '../../src/settings.js';
import { sleep, summarize, type Summary } from './stats.js';
import { ConversationClient, ITERATIONS_PER_CONVERSATION, startWorkload, type ConversationRecord } from './workload.js';

export interface InProcessResult {
  concurrency: number;
  conversationsPerSecond: number;
  /** Conversation latency / 2, ms. */
  iteration: Summary;
  /** Process CPU (user + system) per iteration, ms: the agent plus stand-ins and gateway. */
  cpuMsPerIteration: number;
  failed: number;
}

export async function measureInProcess(concurrency: number, seconds: number, warmupSeconds: number, logFile: string): Promise<InProcessResult> {
  const transport = new MemoryTransport();
  const workload = await startWorkload({ transport });
  const settings: Settings = Object.freeze({
    ...SettingsSchema.parse({}),
    concurrency,
    configRequestQueue: workload.configQueues.request,
    configResponseQueue: workload.configQueues.response,
    configPushQueue: workload.configQueues.push,
    metricsPort: 0,
    shutdownGraceSeconds: 2,
  });
  const logger = pino({ level: 'info', base: { processor: settings.id } }, pino.destination({ dest: logFile, sync: true }));
  const app = await createAgentApp(settings, transport, logger);
  const client = new ConversationClient(transport, workload.topics);
  try {
    await app.start();
    const deadline = Date.now() + 30_000;
    while (!app.service.readiness().ready) {
      if (Date.now() > deadline) throw new Error(`in-process agent not ready: ${app.service.readiness().detail}`);
      await sleep(20);
    }
    await client.start();
    let phase: 'warmup' | 'measure' | 'stop' = 'warmup';
    const records: ConversationRecord[] = [];
    const running = client.run(
      concurrency,
      () => phase === 'stop',
      (r) => {
        if (phase === 'measure') records.push(r);
      },
    );
    await sleep(warmupSeconds * 1000);
    const cpuStart = process.cpuUsage();
    const started = performance.now();
    phase = 'measure';
    await sleep(seconds * 1000);
    const cpu = process.cpuUsage(cpuStart);
    const wall = (performance.now() - started) / 1000;
    const done = records.length;
    phase = 'stop';
    await running;
    const ok = records.slice(0, done).filter((r) => !r.failed);
    return {
      concurrency,
      conversationsPerSecond: done / wall,
      iteration: summarize(ok.map((r) => (r.end - r.start) / ITERATIONS_PER_CONVERSATION)),
      cpuMsPerIteration: (cpu.user + cpu.system) / 1000 / (done * ITERATIONS_PER_CONVERSATION),
      failed: done - ok.length,
    };
  } finally {
    await client.stop();
    await app.stop().catch(() => undefined);
    await workload.stop();
    await transport.close();
  }
}
