/**
 * What a failing integration test prints about itself, so that a failure seen once (on a loaded CI machine)
 * explains itself: the agent's log lines, each transport's status history, and whatever the test adds (the
 * stand-ins' view, the gateway's conversations). `explained(body, report)` runs the body and, when it throws,
 * appends the report to the error's message; with TG_TEST_REPORT=always it prints the report of a pass too.
 */
import { splitPulsarTopic, topicAdminUrl } from '../../src/bus/topics.js';
import type { Transport, TransportStatus } from '../../src/bus/transport.js';
import type { LogCapture } from './log-capture.js';

const started = Date.now();

/** Milliseconds since this module loaded, as every line of a report is stamped. */
export function elapsed(at = Date.now()): string {
  return `+${((at - started) / 1000).toFixed(1)}s`;
}

export interface StatusHistory {
  /** One line per change of `connected` or `epoch`, stamped. */
  readonly lines: string[];
  stop(): void;
}

/** Records every status change the transport pushes, from now on. */
export function recordStatus(transport: Transport, name: string): StatusHistory {
  const lines: string[] = [];
  const record = (status: TransportStatus): void => {
    lines.push(`${elapsed()} ${name}: ${status.connected ? 'connected' : 'down'} epoch ${status.epoch}${status.detail ? ` (${status.detail})` : ''}`);
  };
  record(transport.status());
  const stop = transport.onStatus(record);
  return { lines, stop };
}

/**
 * Log lines at warn or above, or naming one of `ids` anywhere in the line, stamped by their `time`: the
 * service's own (`from: 'service'`) or the native client's (`from: 'pulsar-client'`, whose lookups repeat).
 */
export function logLines(capture: Pick<LogCapture, 'lines'>, ids: readonly string[] = [], limit = 200, from: 'service' | 'pulsar-client' = 'service'): string[] {
  const picked = capture.lines.filter((line) => {
    if ((line.component === 'pulsar-client') !== (from === 'pulsar-client')) return false;
    if (typeof line.level === 'number' && line.level >= 40) return true;
    if (ids.length === 0) return false;
    const text = JSON.stringify(line);
    return ids.some((id) => text.includes(id));
  });
  const shown = picked.slice(-limit).map((line) => {
    const { time, level, msg, pid: _pid, hostname: _host, ...rest } = line;
    return `${typeof time === 'number' ? elapsed(time) : ''} [${String(level)}] ${String(msg)} ${JSON.stringify(rest)}`;
  });
  return picked.length > limit ? [`(${picked.length - limit} earlier lines left out)`, ...shown] : shown;
}

export type Report = Record<string, readonly string[]>;

/**
 * Runs `body`; when it throws, the error's message gets `report()`'s sections appended (report failures too).
 * The report may be asynchronous (asking the broker's admin API, say).
 */
export async function explained<T>(body: () => Promise<T>, report: () => Report | Promise<Report>): Promise<T> {
  const render = (): Promise<string> => renderReport(report);
  try {
    const result = await body();
    // To see the timings of a run that passed (e.g. how long reconnecting took on a loaded machine).
    if (process.env.TG_TEST_REPORT === 'always') console.error(`report of a passing run:\n${await render()}`);
    return result;
  } catch (error) {
    const text = await render();
    if (error instanceof Error) {
      error.message = `${error.message}\n\nat ${elapsed()}; failure report:\n${text}`;
      throw error;
    }
    throw new Error(`${String(error)}\n\nfailure report:\n${text}`, { cause: error });
  }
}

/** The report's sections as text, one titled block each; a report that fails is a line saying so. */
export async function renderReport(report: () => Report | Promise<Report>): Promise<string> {
  try {
    return Object.entries(await report())
      .map(([title, lines]) => `--- ${title} (${lines.length})\n${lines.join('\n')}`)
      .join('\n');
  } catch (reportError) {
    return `(the failure report itself failed: ${String(reportError)})`;
  }
}

/** The parts of the admin API's topic `stats` and `internalStats` that say where a subscription's messages are. */
interface TopicStats {
  msgInCounter?: number;
  /** Non-persistent topics only: messages per second the broker dropped (publishers: over its in-flight limit). */
  publishers?: Array<{ producerName?: string; msgDropRate?: number }>;
  subscriptions?: Record<
    string,
    {
      type?: string;
      msgBacklog?: number;
      unackedMessages?: number;
      msgOutCounter?: number;
      /** Non-persistent topics only: messages per second not dispatched (no permits, or the connection backed up). */
      msgDropRate?: number;
      consumers?: Array<{
        consumerName?: string;
        connectedSince?: string;
        msgOutCounter?: number;
        availablePermits?: number;
        unackedMessages?: number;
      }>;
    }
  >;
}
interface TopicInternalStats {
  cursors?: Record<
    string,
    {
      markDeletePosition?: string;
      readPosition?: string;
      individuallyDeletedMessages?: string;
      waitingReadOp?: boolean;
      subscriptionHavePendingRead?: boolean;
    }
  >;
}

/**
 * What the broker knows of each subscription of a topic, one line per subscription, consumer and cursor: its
 * type, backlog and unacked count, what it sent to each consumer (so a message the broker delivered but the
 * client never handed over shows as sent and not acked) and, on a persistent topic, the cursor's positions.
 * `webServiceUrl` is the broker's admin API (http://host:8080). Never throws: a failed request is a line.
 */
export async function subscriptionStats(webServiceUrl: string, topic: string): Promise<string[]> {
  const { domain, path } = topicAdminPath(webServiceUrl, topic);
  if (path === undefined) return [`${topic}: not a full topic name`];
  const get = async <T>(what: string): Promise<T | string> => {
    try {
      const response = await fetch(`${path}/${what}`, { signal: AbortSignal.timeout(5000) });
      if (!response.ok) return `GET ${what} answered HTTP ${response.status}: ${(await response.text()).slice(0, 200)}`;
      return (await response.json()) as T;
    } catch (err) {
      return `GET ${what} failed: ${String(err)}`;
    }
  };
  const stats = await get<TopicStats>('stats');
  if (typeof stats === 'string') return [`${topic}: ${stats}`];
  const drops = (rate: number | undefined): string => (rate === undefined ? '' : `, dropping ${rate}/s`);
  const lines = [`${topic}: ${stats.msgInCounter ?? '?'} messages in`];
  for (const p of stats.publishers ?? []) {
    if (p.msgDropRate) lines.push(`  publisher ${p.producerName ?? '?'}${drops(p.msgDropRate)}`);
  }
  for (const [name, sub] of Object.entries(stats.subscriptions ?? {})) {
    lines.push(
      `  subscription ${name}: ${sub.type ?? '?'}, backlog ${sub.msgBacklog ?? '?'}, unacked ${sub.unackedMessages ?? '?'}, ` +
        `sent ${sub.msgOutCounter ?? '?'}${drops(sub.msgDropRate)}, ${sub.consumers?.length ?? 0} consumer(s)`,
    );
    for (const c of sub.consumers ?? []) {
      lines.push(
        `    consumer ${c.consumerName ?? '?'} since ${c.connectedSince ?? '?'}: sent ${c.msgOutCounter ?? '?'}, ` +
          `unacked ${c.unackedMessages ?? '?'}, permits ${c.availablePermits ?? '?'}`,
      );
    }
  }
  if (domain === 'persistent') {
    const internal = await get<TopicInternalStats>('internalStats');
    if (typeof internal === 'string') lines.push(`  ${internal}`);
    else {
      for (const [name, cursor] of Object.entries(internal.cursors ?? {})) {
        lines.push(
          `  cursor ${name}: mark-delete ${cursor.markDeletePosition ?? '?'}, read ${cursor.readPosition ?? '?'}, ` +
            `acked beyond mark-delete ${cursor.individuallyDeletedMessages ?? '?'}, waiting read ${String(cursor.waitingReadOp)}, ` +
            `pending read ${String(cursor.subscriptionHavePendingRead)}`,
        );
      }
    }
  }
  return lines;
}

/** The admin API's path of a topic (undefined when `topic` is not a full topic name). */
export function topicAdminPath(webServiceUrl: string, topic: string): { domain?: string; path?: string } {
  try {
    return { domain: splitPulsarTopic(topic).persistence, path: topicAdminUrl(webServiceUrl, topic) };
  } catch {
    return {};
  }
}

/**
 * Waits until the broker has flow permits for `subscription` of `topic`. A subscribe is answered before the
 * broker has taken the new consumer's permits, and a non-persistent topic drops what no consumer has permits
 * for: a test that publishes right after subscribing waits for this first.
 */
export function untilSubscriptionHasPermits(webServiceUrl: string, topic: string, subscription: string, timeoutMs = 30_000): Promise<void> {
  return untilTopicStats(webServiceUrl, topic, `subscription ${subscription} had flow permits`, timeoutMs, (stats) => {
    const consumers = stats.subscriptions?.[subscription]?.consumers ?? [];
    return consumers.some((c) => (c.availablePermits ?? 0) > 0) ? undefined : `${consumers.length} consumer(s), none with permits`;
  });
}

/**
 * Waits until the broker no longer lists `subscription` of a non-persistent `topic`. When its last consumer
 * leaves, the broker removes such a subscription on another thread, after it has answered the close; a
 * consumer that subscribes under the same name in between joins the subscription being removed and never
 * receives a message (Pulsar 4.0: NonPersistentTopic.unsubscribe). A test that subscribes again under the
 * name it just closed waits for this first.
 */
export function untilSubscriptionGone(webServiceUrl: string, topic: string, subscription: string, timeoutMs = 30_000): Promise<void> {
  return untilTopicStats(webServiceUrl, topic, `subscription ${subscription} was removed`, timeoutMs, (stats) => {
    const held = stats.subscriptions?.[subscription];
    return held === undefined ? undefined : `still listed, with ${held.consumers?.length ?? 0} consumer(s)`;
  });
}

/** Waits until the broker lists exactly `count` consumers on `subscription` of `topic`. */
export function untilSubscriptionHasConsumers(webServiceUrl: string, topic: string, subscription: string, count: number, timeoutMs = 30_000): Promise<void> {
  return untilTopicStats(webServiceUrl, topic, `subscription ${subscription} had ${count} consumer(s)`, timeoutMs, (stats) => {
    const held = stats.subscriptions?.[subscription];
    if (held === undefined) return 'no such subscription';
    const consumers = held.consumers?.length ?? 0;
    return consumers === count ? undefined : `${consumers} consumer(s)`;
  });
}

/** Polls the topic's stats until `unmet` returns undefined; throws with its last answer after `timeoutMs`. */
async function untilTopicStats(
  webServiceUrl: string,
  topic: string,
  goal: string,
  timeoutMs: number,
  unmet: (stats: TopicStats) => string | undefined,
): Promise<void> {
  const { path } = topicAdminPath(webServiceUrl, topic);
  if (path === undefined) throw new Error(`${topic} is not a full topic name`);
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${path}/stats`, { signal: AbortSignal.timeout(5000) });
      if (response.ok) {
        const why = unmet((await response.json()) as TopicStats);
        if (why === undefined) return;
        last = why;
      } else last = `HTTP ${response.status}`;
    } catch (err) {
      last = String(err);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`not true within ${timeoutMs} ms on ${topic}: ${goal} (last seen: ${last})`);
}
