/**
 * The broker's own count of what it dropped: on a non-persistent topic, a message for a subscription whose
 * consumers have no flow-control permits is dropped, and only the broker knows. Its admin API reports the
 * rate per subscription (`msgDropRate`, messages per second, updated every `statsUpdateFrequencyInSecs`) in
 * `/admin/v2/non-persistent/<tenant>/<namespace>/<topic>/stats`. This polls it for each flow's request
 * subscription and hands the rate on (a gauge). A broker that cannot be asked is logged once per failure
 * kind and never affects the agent.
 */
import type { Logger } from 'pino';
import { TopicStatsSource } from '../bus/pulsar/index.js';
import { AdminApiError } from '../bus/index.js';
import { errorMessage } from '../errors/index.js';

export interface WatchedSubscription {
  topic: string;
  subscription: string;
}

export interface BrokerDropStatsOptions {
  /** e.g. `http://pulsar:8080`; on a cluster a comma-separated list, asked in turn. */
  adminUrl: string;
  token?: string;
  intervalMs: number;
  subscriptions(): WatchedSubscription[];
  onRate(watched: WatchedSubscription, ratePerSecond: number): void;
  logger: Logger;
}

export class BrokerDropStats {
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private lastProblem: string | undefined;
  private readonly stats: TopicStatsSource;

  constructor(private readonly options: BrokerDropStatsOptions) {
    this.stats = new TopicStatsSource(options.adminUrl, options.token);
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.poll(), this.options.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One round: every watched non-persistent subscription. */
  async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      for (const watched of this.options.subscriptions()) {
        if (!watched.topic.startsWith('non-persistent://')) continue;
        const rate = await this.dropRate(watched);
        if (rate !== undefined) this.options.onRate(watched, rate);
      }
    } finally {
      this.polling = false;
    }
  }

  private async dropRate(watched: WatchedSubscription): Promise<number | undefined> {
    try {
      const answer = await this.stats.fetch(watched.topic, Math.min(10_000, this.options.intervalMs));
      if (!answer.stats) throw new AdminApiError(`HTTP ${answer.status} from ${answer.url}`);
      const rate = answer.stats.subscriptions?.[watched.subscription]?.msgDropRate;
      this.lastProblem = undefined;
      return typeof rate === 'number' && Number.isFinite(rate) ? rate : 0;
    } catch (error) {
      const problem = errorMessage(error);
      if (problem !== this.lastProblem) {
        this.options.logger.warn({ url: this.stats.shownUrl(watched.topic) }, `Cannot read the broker's drop statistics (--broker-admin-url): ${problem}`);
        this.lastProblem = problem;
      }
      return undefined;
    }
  }
}
