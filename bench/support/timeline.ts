/**
 * Where one conversation's time goes, hop by hop (`bench:iteration --timeline N`): N conversations one after
 * another, each step stamped in this process (the gateway's request and responses, each stand-in's request
 * received and reply sent; one conversation at a time, so a stand-in's step belongs to the one in flight). The agent's part of a gap between two steps is the gap minus the one-way broker
 * hops it spans (a floor round trip is two).
 */
import { ms, summarize, table } from './stats.js';
import type { ConversationClient, HopListener, Workload } from './workload.js';

export class HopTimeline {
  private readonly conversations = new Map<string, { event: string; at: number }[]>();
  /** The conversation in flight: the agent's requests to the stand-ins carry ids of their own. */
  private current: { event: string; at: number }[] | undefined;

  private readonly listener: HopListener = (id, event) => {
    const steps = this.conversations.get(id) ?? this.current;
    if (!steps) return;
    const seen = steps.filter((s) => s.event === event || s.event.startsWith(`${event} #`)).length;
    steps.push({ event: seen === 0 ? event : `${event} #${seen + 1}`, at: performance.now() });
  };

  /** Runs `count` conversations one at a time with the gateway's and the stand-ins' hops tapped. */
  async take(client: ConversationClient, workload: Workload, count: number): Promise<void> {
    const tapped = { listener: (id: string, event: string) => this.record(id, event) };
    client.hops = tapped;
    workload.hops.listener = tapped.listener;
    try {
      for (let i = 0; i < count; i++) await client.converse();
    } finally {
      client.hops = {};
      workload.hops.listener = undefined;
    }
  }

  private record(id: string, event: string): void {
    if (event === 'gateway request sent') {
      this.current = [];
      this.conversations.set(id, this.current);
    }
    this.listener(id, event);
  }

  /** Each step's median time after the request was sent, and the median gap to the step before it. */
  report(floorRttP50: number): string {
    const offsets = new Map<string, number[]>();
    for (const steps of this.conversations.values()) {
      const t0 = steps[0]?.at ?? 0;
      for (const step of steps) offsets.set(step.event, [...(offsets.get(step.event) ?? []), step.at - t0]);
    }
    const rows = [...offsets.entries()]
      .map(([event, values]) => ({ event, summary: summarize(values) }))
      .sort((a, b) => a.summary.p50 - b.summary.p50);
    return [
      `${this.conversations.size} conversations one after another; one-way hop ≈ floor RTT p50 / 2 = ${ms(floorRttP50 / 2, 3)}\n`,
      table(
        ['step', 'seen in', 'p50 after the request', 'p99', 'gap to the step before (p50s)'],
        rows.map((r, i) => [
          r.event,
          String(r.summary.count),
          ms(r.summary.p50, 3),
          ms(r.summary.p99, 3),
          i === 0 ? '' : ms(r.summary.p50 - rows[i - 1]!.summary.p50, 3),
        ]),
      ),
    ].join('\n');
  }
}
