/**
 * The broker's own count of what it dropped: on a non-persistent topic, a message for a subscription whose
 * consumers have no flow-control permits is dropped, and only the broker knows. Its admin API reports the
 * rate per subscription (`msgDropRate`, messages per second, updated every `statsUpdateFrequencyInSecs`) in
 * `/admin/v2/non-persistent/<tenant>/<namespace>/<topic>/stats`. This polls it for each flow's request
 * subscription and hands the rate on (a gauge). A broker that cannot be asked is logged once per failure
 * kind and never affects the agent.
 */
import type { Logger } from 'pino';
import { fetchTopicStats, shownStatsUrl } from '../bus/topic-stats.js';
import { errorMessage } from '../errors/error-text.js';

export interface WatchedSubscription {
  topic: string;
  subscription: string;
}

export interface BrokerDropStatsOptions {
  /** e.g. `http://pulsar:8080`. */
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

  constructor(private readonly options: BrokerDropStatsOptions) {}

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
    const { adminUrl, token } = this.options;
    const url = shownStatsUrl(adminUrl, watched.topic);
    try {
      const answer = await fetchTopicStats({ adminUrl, token, topic: watched.topic, timeoutMs: Math.min(10_000, this.options.intervalMs) });
      if (!answer.stats) throw new Error(`HTTP ${answer.status} from ${answer.url}`);
      const rate = answer.stats.subscriptions?.[watched.subscription]?.msgDropRate;
      this.lastProblem = undefined;
      return typeof rate === 'number' && Number.isFinite(rate) ? rate : 0;
    } catch (error) {
      const problem = errorMessage(error);
      if (problem !== this.lastProblem) {
        this.options.logger.warn({ url }, `Cannot read the broker's drop statistics (--broker-admin-url): ${problem}`);
        this.lastProblem = problem;
      }
      return undefined;
    }
  }
}
