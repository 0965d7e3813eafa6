/**
 * TrustGraph queue ids → Pulsar topics, subscription types and subscription names (docs/trustgraph-wire-notes.md §1.2, §1.5).
 *
 * A queue id is `class:topicspace:topic`, split on the first two colons only (the topic may hold colons):
 * `request:tg:agent:default:default` → `non-persistent://tg/request/agent:default:default`. `flow` maps to a
 * persistent topic, `request` / `response` / `notify` to non-persistent ones; tenant = topicspace, namespace = class.
 * An id that already contains `://` is a full Pulsar topic and passes through unchanged.
 */
import { randomBytes } from 'node:crypto';
import { TopicError } from './errors.js';
import type { SubscriptionType } from './transport.js';

/** The four TrustGraph queue classes. */
export type QueueClass = 'flow' | 'request' | 'response' | 'notify';

export const QUEUE_CLASSES: readonly QueueClass[] = ['flow', 'request', 'response', 'notify'];

export interface QueueId {
  cls: QueueClass;
  topicspace: string;
  topic: string;
}

export type Persistence = 'persistent' | 'non-persistent';

export interface PulsarTopicParts {
  persistence: Persistence;
  tenant: string;
  namespace: string;
  /** The local topic name; may contain colons (URL-encode it per path segment when building URLs). */
  topic: string;
}


function isQueueClass(value: string): value is QueueClass {
  return (QUEUE_CLASSES as readonly string[]).includes(value);
}

/** True for ids that are already full Pulsar topic names (`persistent://…`). */
export function isFullTopic(id: string): boolean {
  return id.includes('://');
}

/** Split `class:topicspace:topic` (first two colons only). Throws TopicError on a malformed id or unknown class. */
export function parseQueueId(id: string): QueueId {
  const first = id.indexOf(':');
  const second = first < 0 ? -1 : id.indexOf(':', first + 1);
  if (first < 0 || second < 0) {
    throw new TopicError(`Invalid queue id ${JSON.stringify(id)}: expected "class:topicspace:topic"`);
  }
  const cls = id.slice(0, first);
  const topicspace = id.slice(first + 1, second);
  const topic = id.slice(second + 1);
  if (!isQueueClass(cls)) {
    throw new TopicError(
      `Invalid queue id ${JSON.stringify(id)}: unknown class ${JSON.stringify(cls)} (expected one of ${QUEUE_CLASSES.join(', ')})`,
    );
  }
  if (!topicspace || !topic) {
    throw new TopicError(`Invalid queue id ${JSON.stringify(id)}: topicspace and topic must not be empty`);
  }
  return { cls, topicspace, topic };
}

/** Build a queue id as TrustGraph's `queue(topic, cls='flow', topicspace='tg')` does. */
export function queueId(topic: string, cls: QueueClass = 'flow', topicspace = 'tg'): string {
  return `${cls}:${topicspace}:${topic}`;
}

/** `flow` topics are persistent; `request`, `response` and `notify` are not. */
export function persistenceOf(cls: QueueClass): Persistence {
  return cls === 'flow' ? 'persistent' : 'non-persistent';
}

/** TrustGraph queue id → full Pulsar topic. Full topics (`…://…`) pass through unchanged. */
export function queueToTopic(id: string): string {
  if (isFullTopic(id)) return id;
  const { cls, topicspace, topic } = parseQueueId(id);
  return `${persistenceOf(cls)}://${topicspace}/${cls}/${topic}`;
}

/**
 * The subscription type TrustGraph derives from the class prefix: `response` / `notify` → Exclusive (every
 * subscriber sees every message); `flow` / `request` → Shared (competing consumers). For a full URI the "class" is
 * the scheme, so it ends up Shared.
 */
export function subscriptionTypeFor(id: string): SubscriptionType {
  if (isFullTopic(id)) return 'Shared';
  const { cls } = parseQueueId(id);
  return cls === 'response' || cls === 'notify' ? 'Exclusive' : 'Shared';
}

/**
 * Subscription name of a flow-defined consumer: `<processor-id>--<workspace>--<flow>--<spec-name>`,
 * e.g. `agent-manager--default--default--request`. Replicas with the same id share it.
 */
export function flowSubscriptionName(processorId: string, workspace: string, flow: string, specName: string): string {
  return `${processorId}--${workspace}--${flow}--${specName}`;
}

/** A request/response client's subscription name: `rr-` + 12 random hex characters. */
export function requestResponseSubscriptionName(random: (bytes: number) => Buffer = randomBytes): string {
  return `rr-${random(6).toString('hex').slice(0, 12)}`;
}

/**
 * Split a full Pulsar topic (`persistent://tenant/namespace/topic`) into its parts. Queue ids are not accepted:
 * map them with `queueToTopic` first. Everything after the namespace is the topic (it may contain colons).
 */
/**
 * A topic's resource on the broker's admin API, `<adminUrl>/admin/v2/<persistence>/<tenant>/<namespace>/<topic>`
 * (append `/stats` for its stats). Throws a TopicError for a name that is not a full topic.
 */
export function topicAdminUrl(adminUrl: string, topic: string): string {
  const { persistence, tenant, namespace, topic: local } = splitPulsarTopic(topic);
  return `${adminUrl.replace(/\/+$/, '')}/admin/v2/${persistence}/${encodeURIComponent(tenant)}/${encodeURIComponent(namespace)}/${encodeURIComponent(local)}`;
}

export function splitPulsarTopic(topic: string): PulsarTopicParts {
  const match = /^(persistent|non-persistent):\/\/([^/]+)\/([^/]+)\/(.+)$/.exec(topic);
  if (!match) {
    throw new TopicError(
      `Invalid Pulsar topic ${JSON.stringify(topic)}: expected "persistent://tenant/namespace/topic" or "non-persistent://tenant/namespace/topic"`,
    );
  }
  const [, persistence, tenant, namespace, local] = match;
  return {
    persistence: persistence as Persistence,
    tenant: tenant ?? '',
    namespace: namespace ?? '',
    topic: local ?? '',
  };
}

/** Default of `--aggregation-topic`: a persistent topic next to the flow's request topic. */
export const DEFAULT_AGGREGATION_TOPIC = 'persistent://{tenant}/{namespace}/{topic}-aggregation';

/**
 * The supervisor's aggregation topic of a flow: `template` with `{tenant}`, `{namespace}` and `{topic}` (the
 * local name) of the flow's request topic filled in. It must be persistent: held messages are its state.
 */
export function aggregationTopic(requestTopic: string, template: string = DEFAULT_AGGREGATION_TOPIC): string {
  const parts = splitPulsarTopic(requestTopic);
  const topic = template.replaceAll('{tenant}', parts.tenant).replaceAll('{namespace}', parts.namespace).replaceAll('{topic}', parts.topic);
  if (!topic.startsWith('persistent://')) {
    throw new TopicError(
      `The aggregation topic ${JSON.stringify(topic)} must be persistent:// (its unacknowledged messages are the fan-in's state); ` +
        'set --aggregation-topic to a persistent:// topic or template',
    );
  }
  splitPulsarTopic(topic);
  return topic;
}
