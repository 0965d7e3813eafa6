/**
 * One topic's stats from the Pulsar broker's admin API (`GET …/<topic>/stats`), as the parts that read them
 * (the subscriber check after a reconnect, the drop-rate metric) ask for them: with the token, within a
 * time limit. What a status other than 200 means is the caller's to say.
 *
 * On a cluster the admin URL may name every broker (`http://a:8080,http://b:8080`, or `http://a:8080,b:8080` as
 * Pulsar's own admin client writes it): any broker answers for any topic, so when the one asked last cannot be
 * reached (killed, restarting) or fails (5xx) the next is asked, and the one that answered is asked first next time.
 */
import { topicAdminUrl } from '../topics.js';
import { basicAuthorization, redactUrl, withoutCredentials } from '../../errors/index.js';
import { AdminApiError } from '../errors.js';

/** The parts of Pulsar's topic stats that tg-agent reads. */
export interface TopicStats {
  subscriptions?: Record<string, { msgDropRate?: unknown; consumers?: { availablePermits?: number; consumerName?: string }[] }>;
  publishers?: { producerName?: string }[];
}

export interface TopicStatsAnswer {
  /** The URL asked, as it may be shown (no user-info). */
  url: string;
  status: number;
  /** Present when the broker answered 200. */
  stats?: TopicStats;
  /** The broker's own account of a refusal (the `reason` of its JSON error body), when it gave one. */
  reason?: string;
}

/** `http://a:8080,b:8080` or `http://a:8080,http://b:8080` → one admin URL per broker; a part without a scheme takes the first one's. */
export function adminUrlsOf(list: string): string[] {
  const parts = list.split(',').map((part) => part.trim().replace(/\/+$/, '')).filter((part) => part.length > 0);
  const scheme = /^(https?):\/\//.exec(parts[0] ?? '')?.[1] ?? 'http';
  return parts.map((part) => (/^https?:\/\//.test(part) ? part : `${scheme}://${part}`));
}

/**
 * Rejects when the broker cannot be reached within `timeoutMs`. The token goes as a bearer token; user-info in the
 * admin URL (`http://user:password@host:8080`) as basic auth, where no token is given. One broker's URL.
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
  if (!response.ok) {
    const reason = await errorReason(response);
    return { url: shown, status: response.status, ...(reason === undefined ? {} : { reason }) };
  }
  return { url: shown, status: response.status, stats: (await response.json()) as TopicStats };
}

/** Pulsar's admin API refuses with `{"reason": "..."}`; anything else (a proxy's page, no body) gives undefined. */
async function errorReason(response: Response): Promise<string | undefined> {
  try {
    const body = (await response.json()) as { reason?: unknown };
    return typeof body.reason === 'string' ? body.reason : undefined;
  } catch {
    return undefined;
  }
}

/** The admin APIs of a cluster's brokers (or of the one broker), asked in turn until one answers. */
export class TopicStatsSource {
  private readonly urls: string[];
  /** The index of the URL that answered last: asked first. */
  private preferred = 0;

  /** `adminUrl`: one admin URL, or a comma-separated list of them (adminUrlsOf). */
  constructor(
    adminUrl: string,
    private readonly token?: string,
  ) {
    this.urls = adminUrlsOf(adminUrl);
  }

  /**
   * The stats from the first broker that answers with a status under 500, each given an equal share of what is
   * left of `timeoutMs`; the last broker's answer whatever its status. Rejects with the last failure when none
   * could be reached.
   */
  async fetch(topic: string, timeoutMs: number): Promise<TopicStatsAnswer> {
    const deadline = performance.now() + timeoutMs;
    let failure: unknown;
    for (let tried = 0; tried < this.urls.length; tried++) {
      const index = (this.preferred + tried) % this.urls.length;
      const share = Math.max(100, (deadline - performance.now()) / (this.urls.length - tried));
      try {
        const answer = await fetchTopicStats({ adminUrl: this.urls[index]!, token: this.token, topic, timeoutMs: share });
        if (answer.status >= 500 && tried < this.urls.length - 1) continue;
        this.preferred = index;
        return answer;
      } catch (error) {
        failure = error;
      }
    }
    throw failure ?? new AdminApiError('no broker admin URL to ask');
  }

  /** The stats URL of `topic` on the broker asked first, as logs may show it. */
  shownUrl(topic: string): string {
    return redactUrl(`${topicAdminUrl(withoutCredentials(this.urls[this.preferred]!).url, topic)}/stats`);
  }
}
