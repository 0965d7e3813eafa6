/**
 * The consumer names the broker has on each subscription of a topic, from its admin stats: what the WebSocket
 * transport's consumer heal (websocket/consumer-heal.ts) compares with the names its sockets subscribed under.
 */
import { AdminApiError } from '../errors.js';
import { fetchTopicStats } from './topic-stats.js';

/**
 * The consumer names the broker has on each subscription of `topic` (an empty map: the topic is not served with
 * any subscription), or undefined when that cannot be told now.
 */
export type ConsumerNamesReader = (topic: string) => Promise<Map<string, readonly string[]> | undefined>;

export interface ConsumerNamesOptions {
  /** e.g. `http://pulsar:8080`. */
  readonly adminUrl: string;
  readonly token?: string | undefined;
  /** Bound on one look. Default 5 s. */
  readonly timeoutMs?: number;
}

/**
 * An empty map when the broker serving the topic does not know it (404: nobody has it open there); undefined
 * when it cannot say now (the topic has no running owner yet: a 5xx, a redirect to a broker that is gone).
 * Throws AdminApiError when the broker refuses the credentials.
 */
export function consumerNamesReader(options: ConsumerNamesOptions): ConsumerNamesReader {
  return async (topic) => {
    const answer = await fetchTopicStats({ adminUrl: options.adminUrl, token: options.token, topic, timeoutMs: options.timeoutMs ?? 5_000 });
    if (answer.status === 401 || answer.status === 403) throw new AdminApiError(`HTTP ${answer.status} from ${answer.url}`);
    if (answer.status === 404) return new Map();
    if (!answer.stats) return undefined;
    const names = new Map<string, readonly string[]>();
    for (const [subscription, stats] of Object.entries(answer.stats.subscriptions ?? {})) {
      names.set(subscription, (stats.consumers ?? []).flatMap((c) => (c.consumerName === undefined ? [] : [c.consumerName])));
    }
    return names;
  };
}
