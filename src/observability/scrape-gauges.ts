/**
 * The gauges read from the running service at each scrape instead of being set as things happen: readiness, the
 * concurrency slots (the autoscaling signal), the calls waiting for a slot to a service, and the replay memory. Each reads what the app wires in with its
 * `watch…` method, and shows 0 until then.
 */
import { Gauge, type Registry } from 'prom-client';

/** The concurrency slots' use at one moment (the service's `ConcurrencyLimit` has these getters). */
export interface SlotUse {
  readonly inFlight: number;
  readonly queued: number;
  readonly queuedBytes: number;
}

/** The calls waiting for a slot to one service request topic (`ServiceCallSlots.waiting()`). */
export interface CallsWaiting {
  readonly service: string;
  readonly topic: string;
  readonly waiting: number;
}

export class ScrapeGauges {
  private isReady: () => boolean = () => false;
  private slots: () => SlotUse = () => ({ inFlight: 0, queued: 0, queuedBytes: 0 });
  private rememberedSignatures: () => number = () => 0;
  private callsWaiting: () => readonly CallsWaiting[] = () => [];

  constructor(registers: Registry[]) {
    const gauge = (name: string, help: string, read: () => number): void => {
      const metric: Gauge<'processor'> = new Gauge({ name, help, labelNames: ['processor'], registers, collect: () => metric.set(read()) });
    };
    gauge('tg_agent_ready', 'Whether the agent is ready (1) or not (0), as /readyz answers', () => (this.isReady() ? 1 : 0));
    gauge(
      'tg_agent_iterations_in_flight',
      'Iterations running now, each holding one of the --concurrency slots (the autoscaling signal, docs/scaling.md)',
      () => this.slots().inFlight,
    );
    gauge('tg_agent_queued_requests', 'Requests waiting for a concurrency slot (bounded by --max-queued)', () => this.slots().queued);
    gauge(
      'tg_agent_queued_request_bytes',
      'Bytes of the requests waiting for a concurrency slot (bounded by --max-queued-bytes)',
      () => this.slots().queuedBytes,
    );
    gauge(
      'tg_agent_replay_memory_signatures',
      'Signed next messages accepted within --signing-max-age that this replica remembers (bounded by --replay-memory; 0 without --signing-key)',
      () => this.rememberedSignatures(),
    );
    const waiting: Gauge<'processor' | 'service' | 'topic'> = new Gauge({
      name: 'tg_agent_service_calls_waiting',
      help: 'Calls to a TrustGraph service waiting for one of the --service-max-in-flight slots of its request topic, per topic',
      labelNames: ['processor', 'service', 'topic'],
      registers,
      collect: () => {
        waiting.reset();
        for (const { service, topic, waiting: n } of this.callsWaiting()) waiting.set({ service, topic }, n);
      },
    });
  }

  /** Where `tg_agent_ready` reads readiness from (until set: not ready). */
  watchReadiness(isReady: () => boolean): void {
    this.isReady = isReady;
  }

  /** Where the slot gauges read the slots' use from. */
  watchSlots(read: () => SlotUse): void {
    this.slots = read;
  }

  /** Where `tg_agent_service_calls_waiting` reads the calls waiting for a slot from. */
  watchCallsWaiting(read: () => readonly CallsWaiting[]): void {
    this.callsWaiting = read;
  }

  /** Where `tg_agent_replay_memory_signatures` reads the replay memory's size from. */
  watchReplayMemory(read: () => number): void {
    this.rememberedSignatures = read;
  }
}
