/**
 * Topic moves through a Pulsar broker's admin REST API, as its load manager makes them every day (bench:faults'
 * `topic-unload`, `namespace-unload` and `bundle-unload`): a topic or a namespace bundle is unloaded, its
 * producers and consumers are disconnected, look it up again and reconnect to whichever broker owns it then (on
 * a standalone broker, the same one; in a cluster, possibly the other).
 */
import { topicAdminUrl } from '../src/bus/topics.js';

const ADMIN_TIMEOUT_MS = 30_000;

/** PUT `url`; rejects with the broker's answer unless it is done (204, or 200). */
async function put(url: string): Promise<void> {
  const response = await fetch(url, { method: 'PUT', signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS) });
  if (response.status !== 204 && response.status !== 200) throw new Error(`PUT ${url} answered HTTP ${response.status}: ${(await response.text()).slice(0, 300)}`);
}

/** Unloads one topic (`non-persistent://tg/request/…`): its owner closes it, its clients reconnect. */
export function unloadTopic(adminUrl: string, topic: string): Promise<void> {
  return put(`${topicAdminUrl(adminUrl, topic)}/unload`);
}

/** Unloads every bundle of `namespace` (`tg/request`). */
export function unloadNamespace(adminUrl: string, namespace: string): Promise<void> {
  return put(`${adminUrl}/admin/v2/namespaces/${namespace}/unload`);
}

/** The bundle ranges of `namespace`, e.g. `0x00000000_0x40000000`. */
export async function namespaceBundles(adminUrl: string, namespace: string): Promise<string[]> {
  const response = await fetch(`${adminUrl}/admin/v2/namespaces/${namespace}/bundles`, { signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS) });
  if (!response.ok) throw new Error(`GET bundles of ${namespace} answered HTTP ${response.status}`);
  const { boundaries } = (await response.json()) as { boundaries: string[] };
  return boundaries.slice(1).map((end, i) => `${boundaries[i]}_${end}`);
}

/**
 * Unloads one bundle; with `destinationBroker` (`127.0.0.1:<web port>`, the broker's id) the load manager hands it to
 * that broker, so the bundle's topics move there.
 */
export function unloadBundle(adminUrl: string, namespace: string, bundle: string, destinationBroker?: string): Promise<void> {
  const query = destinationBroker ? `?destinationBroker=${encodeURIComponent(destinationBroker)}` : '';
  return put(`${adminUrl}/admin/v2/namespaces/${namespace}/${bundle}/unload${query}`);
}

/** Which broker owns `topic` now (`pulsar://host:port` of its binary protocol, as the lookup answers). */
export async function topicOwner(adminUrl: string, topic: string): Promise<string> {
  const url = topicAdminUrl(adminUrl, topic).replace('/admin/v2/', '/lookup/v2/topic/');
  const response = await fetch(url, { signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS) });
  if (!response.ok) throw new Error(`lookup of ${topic} answered HTTP ${response.status}`);
  return ((await response.json()) as { brokerUrl: string }).brokerUrl;
}
