/**
 * Publishing through the broker's REST producer (`POST /topics/<domain>/<tenant>/<namespace>/<topic>`), which
 * hands the message to the broker directly, as TrustGraph's gateway does over the binary protocol: a message
 * larger than the WebSocket API's 1 MiB text frame can reach a consumer this way. The topic must exist (have a
 * subscription), as non-persistent topics do while the agent is subscribed. The payload is sent as text and
 * arrives as its UTF-8 bytes.
 */
import type { Properties } from '../../src/bus/transport.js';

export async function publishOverRest(webServiceUrl: string, topic: string, payload: Buffer, properties: Properties): Promise<void> {
  const path = topic.replace(/^(non-persistent|persistent):\/\//, '$1/');
  const response = await fetch(`${webServiceUrl.replace(/\/+$/, '')}/topics/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ payload: payload.toString('utf8'), properties }] }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`REST publish to ${topic}: HTTP ${response.status}: ${text.slice(0, 300)}`);
  const result = JSON.parse(text) as { messagePublishResults?: { errorCode?: number; error?: string }[] };
  const failed = result.messagePublishResults?.find((r) => (r.errorCode ?? 0) !== 0);
  if (failed) throw new Error(`REST publish to ${topic} failed: ${JSON.stringify(failed)}`);
}
