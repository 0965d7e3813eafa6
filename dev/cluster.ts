/**
 * A broker cluster on this machine, as bench:faults --cluster and the cluster tests drive it: its nodes, each
 * killed and started again on its own ports and data (a node with a volume), and a wait until the cluster
 * serves again. dev/kafka-cluster.ts, dev/rabbitmq-cluster.ts and dev/pulsar-cluster.ts start one.
 */
import type { NodeProcess } from './child-process.js';

/** One node of a cluster: a broker (Kafka, RabbitMQ, Pulsar) or a part it needs. */
export interface ClusterNode {
  /** e.g. `kafka-2`, `rabbit-1`, `broker-1`. */
  readonly name: string;
  /** Its process while it runs (for its CPU and `ps`). */
  readonly pid: number | undefined;
  readonly running: boolean;
  /** SIGKILL: a crash; SIGTERM: a clean stop (SIGKILL after 30 s). Resolves once it is gone. */
  kill(signal: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  /** Starts it again on the same ports and data; resolves once it listens. */
  start(): Promise<void>;
}

/** A node that runs as one process of ours (dev/child-process.ts), started and killed through it. */
export class ProcessClusterNode implements ClusterNode {
  private started = false;

  /** `ready`: after its process listens, what else a start waits for (e.g. a broker's readiness endpoint). */
  constructor(
    readonly name: string,
    private readonly process: Pick<NodeProcess, 'pid' | 'kill' | 'start'>,
    private readonly ready: () => Promise<void> = async () => undefined,
  ) {}

  get pid(): number | undefined {
    return this.process.pid;
  }

  get running(): boolean {
    return this.started && this.process.pid !== undefined;
  }

  async kill(signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
    this.started = false;
    await this.process.kill(signal);
  }

  async start(): Promise<void> {
    await this.process.start();
    await this.ready();
    this.started = true;
  }
}

export interface BrokerCluster {
  readonly description: string;
  /** The nodes a fault may kill or restart (the brokers). */
  readonly nodes: readonly ClusterNode[];
  /**
   * Resolves once the cluster serves every topic or queue again on the nodes that run (a leader or an owner for
   * each, replicas in sync where the cluster keeps them); rejects after `timeoutMs`.
   */
  untilServing(timeoutMs: number): Promise<void>;
  /** Stops every node and removes the cluster's data. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Polls `check` every 250 ms until it resolves true; rejects with the last reason after `timeoutMs`. `onReason`
 * hears each reason to wait that differs from the one before.
 */
export async function pollUntil(check: () => Promise<boolean | string>, what: string, timeoutMs: number, onReason?: (reason: string) => void): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const before = last;
    try {
      const verdict = await check();
      if (verdict === true) return;
      last = verdict === false ? '' : verdict;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    if (last !== before) onReason?.(last);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${what}: not within ${timeoutMs / 1000} s${last ? ` (${last})` : ''}`);
}
