/**
 * The consumer names the broker has on each subscription of a topic, from its admin stats: what the WebSocket
 * transport's consumer heal (websocket/consumer-heal.ts) compares with the names its sockets subscribed under.
 */
import { AdminApiError } from '../errors.js';
import { TopicStatsSource } from './topic-stats.js';

/**
 * The consumer names the broker has on each subscription of `topic`, or undefined when that cannot be told now.
 */
export type ConsumerNamesReader = (topic: string) => Promise<Map<string, readonly string[]> | undefined>;

export interface ConsumerNamesOptions {
  /** e.g. `http://pulsar:8080`; on a cluster a comma-separated list of brokers' (any broker answers for any topic). */
  readonly adminUrl: string;
  readonly token?: string | undefined;
  /** Bound on one look. Default 5 s. */
  readonly timeoutMs?: number;
}

/**
 * Undefined when the stats cannot say now: the topic has no running owner yet (a 5xx, a redirect to a broker that
 * is gone), or it is not loaded anywhere (404: nobody publishes to it, so nothing on it is dropped either; and a
 * URL that is not a broker's admin API, such as a WebSocket service of its own, answers 404 to everything).
 * Throws AdminApiError when the broker refuses the credentials, and the last failure when no broker of the list
 * could be reached (TopicStatsSource asks them in turn).
 */
export function consumerNamesReader(options: ConsumerNamesOptions): ConsumerNamesReader {
  const source = new TopicStatsSource(options.adminUrl, options.token);
  return async (topic) => {
    const answer = await source.fetch(topic, options.timeoutMs ?? 5_000);
    if (answer.status === 401 || answer.status === 403) throw new AdminApiError(`HTTP ${answer.status} from ${answer.url}`);
    if (!answer.stats) return undefined;
    const names = new Map<string, readonly string[]>();
    for (const [subscription, stats] of Object.entries(answer.stats.subscriptions ?? {})) {
      names.set(subscription, (stats.consumers ?? []).flatMap((c) => (c.consumerName === undefined ? [] : [c.consumerName])));
    }
    return names;
  };
}
