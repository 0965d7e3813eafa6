/**
 * What went through the broker in a window, by topic: messages and bytes published to it, read from the
 * broker's own Prometheus endpoint (`pulsar_in_messages_total`, `pulsar_in_bytes_total`, one series per topic,
 * non-persistent topics included). Independent of the agent's code, so two trees compare on the same count.
 */
import { topicAdminUrl } from '../../src/bus/topics.js';

export interface TopicTraffic {
  messages: number;
  bytes: number;
}

export type BrokerTraffic = Map<string, TopicTraffic>;

const SERIES = /^pulsar_in_(messages|bytes)_total\{([^}]*)\}\s+(\S+)/;

/** The broker's per-topic counters now (an empty map when its metrics cannot be read). */
export async function readBrokerTraffic(webServiceUrl: string): Promise<BrokerTraffic> {
  const traffic: BrokerTraffic = new Map();
  let text: string;
  try {
    const response = await fetch(`${webServiceUrl}/metrics/`, { signal: AbortSignal.timeout(10_000) });
    text = await response.text();
  } catch {
    return traffic;
  }
  for (const line of text.split('\n')) {
    const match = SERIES.exec(line);
    if (!match) continue;
    const topic = /topic="([^"]*)"/.exec(match[2]!)?.[1];
    if (topic === undefined) continue;
    const entry = traffic.get(topic) ?? { messages: 0, bytes: 0 };
    if (match[1] === 'messages') entry.messages += Number(match[3]);
    else entry.bytes += Number(match[3]);
    traffic.set(topic, entry);
  }
  return traffic;
}

/** Per-topic difference `after − before`, topics with no traffic left out, largest byte count first. */
export function trafficBetween(before: BrokerTraffic, after: BrokerTraffic): [string, TopicTraffic][] {
  const out: [string, TopicTraffic][] = [];
  for (const [topic, now] of after) {
    const then = before.get(topic) ?? { messages: 0, bytes: 0 };
    const delta = { messages: now.messages - then.messages, bytes: now.bytes - then.bytes };
    if (delta.messages > 0 || delta.bytes > 0) out.push([topic, delta]);
  }
  return out.sort((a, b) => b[1].bytes - a[1].bytes);
}

/** A topic's messages in, and out to each subscription, since the broker loaded it (its admin API's stats). */
export interface TopicDeliveries {
  topic: string;
  in: number;
  out: Record<string, number>;
}

/**
 * What the broker delivered of what reached a topic. On a non-persistent topic, a subscription's `out` below
 * `in` counts messages the broker dropped for it (it keeps nothing to hand over later). Undefined when the
 * stats cannot be read.
 */
export async function topicDeliveries(webServiceUrl: string, topic: string): Promise<TopicDeliveries | undefined> {
  try {
    const response = await fetch(`${topicAdminUrl(webServiceUrl, topic)}/stats`, { signal: AbortSignal.timeout(10_000) });
    if (!response.ok) return undefined;
    const stats = (await response.json()) as { msgInCounter?: number; subscriptions?: Record<string, { msgOutCounter?: number }> };
    const out = Object.fromEntries(Object.entries(stats.subscriptions ?? {}).map(([sub, s]) => [sub, s.msgOutCounter ?? 0]));
    return { topic, in: stats.msgInCounter ?? 0, out };
  } catch {
    return undefined;
  }
}
