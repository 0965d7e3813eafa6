/**
 * What discovery knows about each `mcp` entry of a workspace, as handed to the registry builder: a
 * synchronous, immutable snapshot (building a registry never waits on a server).
 */
import type { DiscoveryFailureReason } from './errors.js';
import type { DiscoveredSchema } from './schema-arguments.js';

interface DiscoveryCommon {
  /** The `mcp` config key. */
  readonly mcpKey: string;
  /** The tool name on the server. */
  readonly remoteName: string;
  /** The server URL, user-info hidden. */
  readonly url: string;
}

export type McpToolDiscovery =
  | (DiscoveryCommon & {
      readonly status: 'ok';
      readonly schema: DiscoveredSchema;
      /** The tool's description on the server. */
      readonly description: string | null;
      /** When the server's answer was received (ms since epoch). */
      readonly fetchedAt: number;
    })
  /** Not asked yet (or the first answer is on its way). */
  | (DiscoveryCommon & { readonly status: 'pending' })
  | (DiscoveryCommon & {
      readonly status: 'failed';
      readonly reason: DiscoveryFailureReason;
      readonly error: string;
      readonly failedAt: number;
    });

/** `mcp` config key → its discovery; a key that is absent is not in the workspace's `mcp` config. */
export type McpDiscoveryLookup = ReadonlyMap<string, McpToolDiscovery>;

/** A short text that changes exactly when what the registry would build from `discovery` changes. */
export function discoveryFingerprint(discovery: McpToolDiscovery): string {
  const common = `${discovery.status}\u0000${discovery.url}\u0000${discovery.remoteName}`;
  switch (discovery.status) {
    case 'ok':
      return `${common}\u0000${discovery.description ?? ''}\u0000${discovery.schema.fingerprint}`;
    case 'pending':
      return common;
    case 'failed':
      return `${common}\u0000${discovery.reason}\u0000${discovery.error}`;
  }
}
