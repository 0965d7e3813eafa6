/**
 * One measured window of conversations: `client.run` keeps `concurrency` conversations in flight through a
 * warm-up and then the window, with a CPU meter over the named processes for exactly the window. `before` and
 * `after` read whatever the caller needs (the agent's counters, its probe) just before the meter starts and
 * just after it stops, while conversations still flow.
 */
import { CpuMeter, type CpuReading } from './proc.js';
import { sleep } from './stats.js';
import type { ConversationClient, ConversationRecord } from './workload.js';

export interface WindowOptions<B, A> {
  concurrency: number;
  warmupSeconds: number;
  durationSeconds: number;
  /** The processes whose CPU time is read over the window, by name. */
  pids: Readonly<Record<string, number | undefined>>;
  before?: () => Promise<B>;
  after?: () => Promise<A>;
}

export interface WindowResult<B, A> {
  /** Conversations that started after the warm-up began and ended inside the window. */
  records: ConversationRecord[];
  windowSeconds: number;
  cpu: CpuReading;
  before: B;
  after: A;
}

export async function measureWindow<B = undefined, A = undefined>(client: ConversationClient, options: WindowOptions<B, A>): Promise<WindowResult<B, A>> {
  let phase: 'warmup' | 'measure' | 'stop' = 'warmup';
  const records: ConversationRecord[] = [];
  let windowStart = 0;
  const running = client.run(
    options.concurrency,
    () => phase === 'stop',
    (record) => {
      if (phase === 'measure' && record.end >= windowStart) records.push(record);
    },
  );
  try {
    await sleep(options.warmupSeconds * 1000);
    const before = (await options.before?.()) as B;
    const meter = new CpuMeter(options.pids);
    windowStart = performance.now();
    phase = 'measure';
    await sleep(options.durationSeconds * 1000);
    const windowEnd = performance.now();
    const cpu = meter.stop();
    const after = (await options.after?.()) as A;
    return { records: records.filter((r) => r.end <= windowEnd), windowSeconds: (windowEnd - windowStart) / 1000, cpu, before, after };
  } finally {
    phase = 'stop';
    await running;
  }
}
