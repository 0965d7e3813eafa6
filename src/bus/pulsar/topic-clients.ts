/**
 * The clients the broker has on a topic, by name, from its admin stats: the consumer names on each subscription
 * and the producer names among its publishers. The WebSocket transport's socket heal (websocket/socket-heal.ts)
 * compares them with the names its sockets registered under.
 */
import { AdminApiError } from '../errors.js';
import { TopicStatsSource } from './topic-stats.js';

/** The names the broker has on one topic. */
export interface TopicClients {
  /** Per subscription, the consumer names on it. */
  readonly subscriptions: ReadonlyMap<string, readonly string[]>;
  /** The producer names publishing to the topic. */
  readonly publishers: readonly string[];
}

/** The clients the broker has on `topic`, or undefined when that cannot be told now. */
export type TopicClientsReader = (topic: string) => Promise<TopicClients | undefined>;

export interface TopicClientsOptions {
  /** e.g. `http://pulsar:8080`; on a cluster a comma-separated list of brokers' (any broker answers for any topic). */
  readonly adminUrl: string;
  readonly token?: string | undefined;
  /** Bound on one look. Default 5 s. */
  readonly timeoutMs?: number;
}

/**
 * A topic the broker says it does not have (404 with Pulsar's "Topic … not found") has no clients: a topic is
 * loaded on its owner while any client is attached, so after a move the new owner answers this until somebody
 * connects, which is how the WebSocket service's clients that have not come back show. Undefined when the stats
 * cannot say now: the topic has no running owner yet (a 5xx, a redirect to a broker that is gone), or a 404 that
 * is not the broker's (a URL that is not a broker's admin API, such as a WebSocket service of its own, answers 404
 * to everything). Throws AdminApiError when the broker refuses the credentials, and the last failure when no
 * broker of the list could be reached (TopicStatsSource asks them in turn).
 */
export function topicClientsReader(options: TopicClientsOptions): TopicClientsReader {
  const source = new TopicStatsSource(options.adminUrl, options.token);
  return async (topic) => {
    const answer = await source.fetch(topic, options.timeoutMs ?? 5_000);
    if (answer.status === 401 || answer.status === 403) throw new AdminApiError(`HTTP ${answer.status} from ${answer.url}`);
    if (answer.status === 404 && answer.reason !== undefined && /not found/i.test(answer.reason)) return NO_CLIENTS;
    if (!answer.stats) return undefined;
    const subscriptions = new Map<string, readonly string[]>();
    for (const [subscription, stats] of Object.entries(answer.stats.subscriptions ?? {})) {
      subscriptions.set(subscription, namesOf(stats.consumers, (c) => c.consumerName));
    }
    return { subscriptions, publishers: namesOf(answer.stats.publishers, (p) => p.producerName) };
  };
}

const NO_CLIENTS: TopicClients = { subscriptions: new Map(), publishers: [] };

function namesOf<T>(clients: readonly T[] | undefined, name: (client: T) => string | undefined): string[] {
  return (clients ?? []).flatMap((client) => {
    const value = name(client);
    return value === undefined ? [] : [value];
  });
}
