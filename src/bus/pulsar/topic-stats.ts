/**
 * One topic's stats from the Pulsar broker's admin API (`GET …/<topic>/stats`), as the parts that read them
 * (the subscriber check after a reconnect, the drop-rate metric) ask for them: with the token, within a
 * time limit. What a status other than 200 means is the caller's to say.
 */
import { topicAdminUrl } from '../topics.js';

/** The parts of Pulsar's topic stats that tg-agent reads. */
export interface TopicStats {
  subscriptions?: Record<string, { msgDropRate?: unknown; consumers?: { availablePermits?: number }[] }>;
}

export interface TopicStatsAnswer {
  url: string;
  status: number;
  /** Present when the broker answered 200. */
  stats?: TopicStats;
}

/** Rejects when the broker cannot be reached within `timeoutMs`. */
export async function fetchTopicStats(options: { adminUrl: string; token?: string | undefined; topic: string; timeoutMs: number }): Promise<TopicStatsAnswer> {
  const url = `${topicAdminUrl(options.adminUrl, options.topic)}/stats`;
  const response = await fetch(url, {
    headers: options.token ? { Authorization: `Bearer ${options.token}` } : {},
    signal: AbortSignal.timeout(Math.round(options.timeoutMs)),
  });
  if (!response.ok) return { url, status: response.status };
  return { url, status: response.status, stats: (await response.json()) as TopicStats };
}
