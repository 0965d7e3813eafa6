/**
 * Whether a non-persistent topic has a subscriber again after a broker restart, from the broker's admin API.
 *
 * A non-persistent topic drops a message for which no subscription exists, and says nothing. After a restart
 * every client reconnects on its own schedule (TrustGraph's Python services with the C++ client's backoff, up
 * to a minute), so a message published the moment we are back (an answer for the gateway, a request for the
 * prompt service) can fall into a topic its reader has not re-subscribed to yet. A fixed settle covers a
 * reader that is back within seconds; this waits, for a bounded time, until the topic's stats show at least
 * one subscription with a consumer that has flow permits. A broker whose admin API cannot be asked is not waited for.
 */
import type { Logger } from 'pino';
import { errorMessage } from '../../errors/index.js';
import { TopicStatsSource } from './topic-stats.js';
import { AdminApiError } from '../errors.js';
import type { SubscriberCheck } from '../connection-status.js';

export interface SubscriberPresenceOptions {
  /** e.g. `http://pulsar:8080`; on a cluster a comma-separated list, asked in turn (topic-stats.ts). */
  adminUrl: string;
  token?: string;
  logger: Logger;
  /** Between two looks at the topic's stats. Default 250 ms. */
  pollMs?: number;
}

type Look = 'present' | 'absent' | 'unknown';

export class SubscriberPresence implements SubscriberCheck {
  private lastProblem: string | undefined;
  private readonly stats: TopicStatsSource;

  constructor(private readonly options: SubscriberPresenceOptions) {
    this.stats = new TopicStatsSource(options.adminUrl, options.token);
  }

  async waitFor(topic: string, maxWaitMs: number): Promise<void> {
    const deadline = performance.now() + maxWaitMs;
    for (;;) {
      const look = await this.look(topic, deadline);
      if (look !== 'absent') return;
      if (performance.now() >= deadline) {
        this.options.logger.warn({ topic, waitedMs: maxWaitMs }, 'No subscriber on the topic since the broker came back; publishing anyway');
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, this.options.pollMs ?? 250));
    }
  }

  private async look(topic: string, deadline: number): Promise<Look> {
    try {
      const answer = await this.stats.fetch(topic, Math.max(100, Math.min(5_000, deadline - performance.now())));
      if (answer.status === 401 || answer.status === 403) throw new AdminApiError(`HTTP ${answer.status} from ${answer.url}`);
      // Not found and the like: nobody has the topic open again yet (a fresh broker, or the namespace not back).
      const stats = answer.stats;
      if (!stats) return 'absent';
      // A consumer without flow permits yet (they follow its subscribe) would have the message dropped too.
      const subscribed = Object.values(stats.subscriptions ?? {}).some((s) => (s.consumers ?? []).some((c) => (c.availablePermits ?? 1) > 0));
      this.lastProblem = undefined;
      return subscribed ? 'present' : 'absent';
    } catch (error) {
      if (performance.now() >= deadline) return 'unknown';
      const problem = errorMessage(error);
      if (problem !== this.lastProblem) {
        this.options.logger.warn({ url: this.stats.shownUrl(topic) }, `Cannot ask the broker whether the topic has a subscriber again (--broker-admin-url): ${problem}`);
        this.lastProblem = problem;
      }
      return 'unknown';
    }
  }
}
