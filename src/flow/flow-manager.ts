/**
 * Starts and stops flows as `processor:<id>` configuration says (docs/trustgraph-wire-notes.md §1.12): a new flow starts, a removed
 * one stops, a changed one restarts (the new runtime first, then the old one stops). Changes are applied one at a time.
 */
import type { Logger } from 'pino';
import { diffFlows, type FlowDefinition, flowKey } from '../config/index.js';
import { fixedBackoff, RetryTimer } from '../retry/index.js';
import { FlowRuntime } from './flow-runtime.js';
import type { FlowRuntimeDeps } from './ports.js';

/** Delay before starting a flow again that failed to start (e.g. the broker was away). */
export const FLOW_RESTART_DELAY_MS = 5000;

export class FlowManager {
  private readonly running = new Map<string, FlowRuntime>();
  private readonly wanted = new Map<string, FlowDefinition[]>();
  private queue: Promise<void> = Promise.resolve();
  private readonly failedFlows = new Set<string>();
  /** Flows that failed to start are tried again after this. */
  private readonly restarts = new RetryTimer(fixedBackoff(FLOW_RESTART_DELAY_MS));

  constructor(
    private readonly deps: FlowRuntimeDeps,
    private readonly logger: Logger,
  ) {}

  /** The flows of one workspace are now exactly `flows`. Resolves once they are started/stopped. */
  sync(workspace: string, flows: readonly FlowDefinition[]): Promise<void> {
    this.wanted.set(workspace, [...flows]);
    return this.enqueue(() => this.apply(workspace));
  }

  /** Retry flows that failed to start now (they are also retried FLOW_RESTART_DELAY_MS after each failure). */
  retryFailed(): Promise<void> {
    if (this.failedFlows.size === 0) return this.queue;
    return this.enqueue(async () => {
      for (const workspace of this.wanted.keys()) await this.apply(workspace);
    });
  }

  get failedCount(): number {
    return this.failedFlows.size;
  }

  flows(): FlowDefinition[] {
    return [...this.running.values()].map((r) => r.definition);
  }

  async stopAll(): Promise<void> {
    this.wanted.clear();
    this.restarts.stop();
    await this.enqueue(async () => {
      const runtimes = [...this.running.values()];
      this.running.clear();
      await Promise.allSettled(runtimes.map((r) => r.stop()));
    });
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.queue.then(task);
    this.queue = run.catch((error: unknown) => this.logger.error({ err: error }, 'Flow change failed'));
    return this.queue;
  }

  private async apply(workspace: string): Promise<void> {
    const running = new Map([...this.running].filter(([, r]) => r.definition.workspace === workspace).map(([k, r]) => [k, r.definition]));
    const { start, stop } = diffFlows(running, this.wanted.get(workspace) ?? []);
    const changed = new Set(start.map(flowKey));
    for (const flow of stop) {
      if (changed.has(flowKey(flow))) continue;
      this.failedFlows.delete(flowKey(flow));
      const runtime = this.running.get(flowKey(flow));
      this.running.delete(flowKey(flow));
      await runtime?.stop();
    }
    for (const flow of start) {
      // A changed flow restarts make-before-break: the old runtime stops once the new one is subscribed. The
      // flow's subscriptions never empty, so the broker neither drops requests in between nor removes a
      // subscription the new consumers have just joined (it does that after answering the last close).
      const previous = this.running.get(flowKey(flow));
      this.running.delete(flowKey(flow));
      await this.startFlow(flow);
      await previous?.stop();
    }
  }

  private async startFlow(flow: FlowDefinition): Promise<void> {
    try {
      this.running.set(flowKey(flow), await FlowRuntime.start(flow, this.deps));
      this.failedFlows.delete(flowKey(flow));
    } catch (error) {
      this.failedFlows.add(flowKey(flow));
      this.logger.error({ err: error, workspace: flow.workspace, flow: flow.flow }, `Flow "${flow.flow}" could not start; will retry`);
      this.restarts.retryLater(() => void this.retryFailed());
    }
  }
}
