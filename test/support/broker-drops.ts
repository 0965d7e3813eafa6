/**
 * What the broker itself dropped on a non-persistent topic. The broker hands a non-persistent message to a
 * subscription's consumer only if that consumer has flow permits and its connection is writable at that moment;
 * otherwise the message is gone (counted in a decaying `msgDropRate`, never stored). On a 2-core machine whose
 * cores are taken, the broker's own IO threads fall behind and a busy connection stops being writable for a
 * moment: a few messages of a burst are dropped before any client sees them. A test that must tell "the agent
 * lost a message" from "the broker dropped one" counts the drops here: the topic's messages in minus what each
 * subscription was sent.
 */
import { topicAdminPath } from './failure-report.js';

interface DropStats {
  msgInCounter?: number;
  subscriptions?: Record<string, { msgOutCounter?: number }>;
}

/**
 * Messages the broker took on `topic` but never sent to a subscription, summed over its subscriptions (each
 * subscription gets its own copy). Only meaningful for subscriptions that existed before the first message.
 * Throws when the admin API does not answer: a count that is not known must not pass for zero.
 */
export async function brokerDrops(webServiceUrl: string, topic: string): Promise<number> {
  const stats = await dropStats(webServiceUrl, topic);
  const received = stats.msgInCounter ?? 0;
  return Object.values(stats.subscriptions ?? {}).reduce((sum, sub) => sum + Math.max(0, received - (sub.msgOutCounter ?? 0)), 0);
}

/**
 * Messages the broker took on `topic` but never sent to `subscription` (which must have existed before the
 * first message): 0 when the subscription is not there. Throws when the admin API does not answer.
 */
export async function droppedFor(webServiceUrl: string, topic: string, subscription: string): Promise<number> {
  const stats = await dropStats(webServiceUrl, topic);
  const sent = stats.subscriptions?.[subscription]?.msgOutCounter;
  return sent === undefined ? 0 : Math.max(0, (stats.msgInCounter ?? 0) - sent);
}

async function dropStats(webServiceUrl: string, topic: string): Promise<DropStats> {
  const { domain, path } = topicAdminPath(webServiceUrl, topic);
  if (path === undefined) throw new Error(`${topic} is not a full topic name`);
  if (domain !== 'non-persistent') return {};
  const response = await fetch(`${path}/stats`, { signal: AbortSignal.timeout(10_000) });
  if (!response.ok) throw new Error(`stats of ${topic}: HTTP ${response.status} ${(await response.text()).slice(0, 200)}`);
  return (await response.json()) as DropStats;
}
