/**
 * One topic's stats from the Pulsar broker's admin API (`GET …/<topic>/stats`), as the parts that read them
 * (the subscriber check after a reconnect, the drop-rate metric) ask for them: with the token, within a
 * time limit. What a status other than 200 means is the caller's to say.
 */
import { topicAdminUrl } from '../topics.js';
import { basicAuthorization, redactUrl, withoutCredentials } from '../../errors/index.js';

/** The parts of Pulsar's topic stats that tg-agent reads. */
export interface TopicStats {
  subscriptions?: Record<string, { msgDropRate?: unknown; consumers?: { availablePermits?: number; consumerName?: string }[] }>;
}

export interface TopicStatsAnswer {
  /** The URL asked, as it may be shown (no user-info). */
  url: string;
  status: number;
  /** Present when the broker answered 200. */
  stats?: TopicStats;
}

/**
 * Rejects when the broker cannot be reached within `timeoutMs`. The token goes as a bearer token; user-info in the
 * admin URL (`http://user:password@host:8080`) as basic auth, where no token is given.
 */
export async function fetchTopicStats(options: { adminUrl: string; token?: string | undefined; topic: string; timeoutMs: number }): Promise<TopicStatsAnswer> {
  const { url: adminUrl, basicAuth } = withoutCredentials(options.adminUrl);
  const url = `${topicAdminUrl(adminUrl, options.topic)}/stats`;
  const authorization = options.token ? `Bearer ${options.token}` : basicAuth ? basicAuthorization(basicAuth) : undefined;
  const response = await fetch(url, {
    headers: authorization ? { Authorization: authorization } : {},
    signal: AbortSignal.timeout(Math.round(options.timeoutMs)),
  });
  const shown = redactUrl(url);
  if (!response.ok) return { url: shown, status: response.status };
  return { url: shown, status: response.status, stats: (await response.json()) as TopicStats };
}

/** The stats URL of `topic` as logs may show it. */
export function shownStatsUrl(adminUrl: string, topic: string): string {
  return redactUrl(`${topicAdminUrl(adminUrl, topic)}/stats`);
}
