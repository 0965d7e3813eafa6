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
import { errorMessage } from '../errors/error-text.js';
import { fetchTopicStats, shownStatsUrl } from './topic-stats.js';

export interface SubscriberPresenceOptions {
  /** e.g. `http://pulsar:8080`. */
  adminUrl: string;
  token?: string;
  logger: Logger;
  /** Between two looks at the topic's stats. Default 250 ms. */
  pollMs?: number;
}

/** Told to wait until `topic` has a subscriber, for at most `maxWaitMs`; never fails. */
export interface SubscriberCheck {
  waitFor(topic: string, maxWaitMs: number): Promise<void>;
}

type Look = 'present' | 'absent' | 'unknown';

export class SubscriberPresence implements SubscriberCheck {
  private lastProblem: string | undefined;

  constructor(private readonly options: SubscriberPresenceOptions) {}

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
    const { adminUrl, token } = this.options;
    const url = shownStatsUrl(adminUrl, topic);
    try {
      const answer = await fetchTopicStats({ adminUrl, token, topic, timeoutMs: Math.max(100, Math.min(5_000, deadline - performance.now())) });
      if (answer.status === 401 || answer.status === 403) throw new Error(`HTTP ${answer.status} from ${answer.url}`);
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
        this.options.logger.warn({ url }, `Cannot ask the broker whether the topic has a subscriber again (--broker-admin-url): ${problem}`);
        this.lastProblem = problem;
      }
      return 'unknown';
    }
  }
}
