/**
 * Notices a broker that is connected but does not answer (a paused or overloaded JVM, a half-open network
 * path): a producer keeps publishing a tiny message on a non-persistent probe topic nobody subscribes to, and
 * the broker is unresponsive while a probe has waited longer than `timeoutMs` for its acknowledgement. A
 * connection's own keepalive takes far longer to give up (the WebSocket transport: two 30 s ping periods).
 *
 * The probe only reports; it changes nothing about the connections. It works the same on every transport,
 * since it uses only `Transport`.
 */
import type { Logger } from 'pino';
import { TransportError } from './errors.js';
import type { Producer, Transport } from './transport.js';
import { errorMessage, InvalidUseError } from '../errors/index.js';

export interface BrokerProbeOptions {
  transport: Transport;
  /** Full topic name, e.g. `non-persistent://tg/request/agent-manager-liveness`. */
  topic: string;
  /** A probe unanswered for longer than this makes the broker unresponsive. A probe is sent every half of it. */
  timeoutMs: number;
  logger: Logger;
}

export interface ProbeState {
  responsive: boolean;
  detail?: string;
}

export class BrokerProbe {
  private producer: Producer | undefined;
  private creating = false;
  private timer: NodeJS.Timeout | undefined;
  /** When the oldest unanswered probe was sent (undefined: none outstanding). */
  private oldestOutstanding: number | undefined;
  private outstanding = 0;
  private lastFailure: string | undefined;
  private stopped = false;

  constructor(private readonly options: BrokerProbeOptions) {
    if (!Number.isFinite(options.timeoutMs) || options.timeoutMs <= 0) {
      throw new InvalidUseError(`timeoutMs must be a finite number greater than 0, got ${options.timeoutMs}`);
    }
  }

  start(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => this.tick(), Math.max(50, this.options.timeoutMs / 2));
    this.timer.unref();
    this.tick();
  }

  /** Unresponsive while a probe has waited longer than the timeout, or could not even be created for that long. */
  state(now = Date.now()): ProbeState {
    if (this.oldestOutstanding === undefined) return { responsive: true };
    const waited = now - this.oldestOutstanding;
    if (waited <= this.options.timeoutMs) return { responsive: true };
    return {
      responsive: false,
      detail:
        `the broker has not acknowledged a probe message on ${this.options.topic} for ${Math.round(waited / 1000)} s ` +
        `(limit ${this.options.timeoutMs / 1000} s${this.lastFailure ? `; last failure: ${this.lastFailure}` : ''})`,
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.producer?.close().catch(() => undefined);
  }

  private tick(): void {
    if (this.stopped) return;
    // One probe at a time: while one waits, its age is what counts.
    if (this.outstanding > 0) return;
    this.outstanding += 1;
    this.oldestOutstanding ??= Date.now();
    void this.probe().then(
      () => {
        this.lastFailure = undefined;
        this.oldestOutstanding = undefined;
      },
      (error: unknown) => {
        // Keep `oldestOutstanding`: the broker has still not answered since then.
        this.lastFailure = errorMessage(error);
        // A producer that can no longer send (closed) is replaced at the next probe.
        if (error instanceof TransportError && !error.retriable) this.producer = undefined;
        this.options.logger.debug({ err: error }, 'Broker probe failed');
      },
    ).finally(() => {
      this.outstanding -= 1;
    });
  }

  private async probe(): Promise<void> {
    if (!this.producer) {
      if (this.creating) return;
      this.creating = true;
      try {
        this.producer = await this.options.transport.createProducer(this.options.topic);
      } finally {
        this.creating = false;
      }
      if (this.stopped) {
        await this.producer.close().catch(() => undefined);
        return;
      }
    }
    await this.producer.send({ payload: Buffer.from('{}') });
  }
}
