/**
 * TrustGraph's config type `mcp` (docs/trustgraph-agent-notes.md §2.9, §5.3): config key → `{url, remote-name?, auth-token?}`,
 * written by `tg-set-mcp-tool`. An `mcp-tool` tool names its entry by key in its `mcp-tool` field; the
 * MCP tool called on the server is `remote-name`, defaulting to the key. A non-empty `auth-token` is sent
 * as `Authorization: Bearer <token>` (an empty one sends nothing: TrustGraph's tests' behaviour, docs/trustgraph-agent-notes.md §5.3).
 *
 * Parsing never throws: a bad entry is left out and reported, the others are used. Tokens never appear in
 * messages, and URLs are shown without their user-info part.
 */
import { z } from 'zod';
import { decodeEntry } from '../tools/config/config-entry.js';
import { describeValue, quote } from '../tools/describe-value.js';
import { checkAgainst } from '../tools/config/schema-issues.js';
import { stringList } from '../tools/config/tool-config-schema.js';
import { redactUrl } from '../errors/secret-text.js';

export const MCP_CONFIG_TYPE = 'mcp';

/** One usable `mcp` entry. */
export interface McpServerEntry {
  /** The config key, which tools name in `mcp-tool`. */
  readonly key: string;
  readonly url: string;
  /** The tool name on the MCP server (`remote-name`, default the key). */
  readonly remoteName: string;
  /** Sent as a bearer token when non-empty. Never log it. */
  readonly authToken: string | undefined;
}

export interface McpConfigProblem {
  readonly key: string;
  readonly field?: string;
  readonly message: string;
  /** The whole sentence, naming the workspace and the key. */
  readonly text: string;
}

export interface McpConfig {
  readonly entries: ReadonlyMap<string, McpServerEntry>;
  readonly problems: readonly McpConfigProblem[];
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

export const McpEntrySchema = z.looseObject({
  url: z
    .string({
      error: (issue) =>
        issue.input === undefined ? 'required: the MCP server URL (http:// or https://)' : `expected a URL, got ${describeValue(issue.input)}`,
    })
    .refine((url) => isHttpUrl(url.trim()), {
      error: (issue) => `expected an http:// or https:// URL, got ${quote(redactUrl(String(issue.input)))}`,
    }),
  'remote-name': z
    .string({ error: (issue) => `expected the MCP tool name as a string, got ${describeValue(issue.input)}` })
    .nullable()
    .optional(),
  // The value is never echoed: it is a secret.
  'auth-token': z.string({ error: () => 'expected a string (the bearer token)' }).nullable().optional(),
  // Ours: inherited by the entry's mcp-tool tools that name no group (src/tools/config/inherited-groups.ts).
  group: stringList('group names').nullable().optional(),
});

/** The URL as it may be shown (errors/secret-text.ts): user-info replaced by `***@`, query string dropped. */
export { redactUrl };

/** Parse a workspace's `mcp` values (config key → JSON string). */
export function parseMcpConfig(workspace: string, values: Readonly<Record<string, unknown>> | null | undefined): McpConfig {
  const entries = new Map<string, McpServerEntry>();
  const problems: McpConfigProblem[] = [];
  const problem = (key: string, message: string, field?: string): void => {
    const where = `workspace ${JSON.stringify(workspace)}, mcp key ${JSON.stringify(key)}: `;
    problems.push(
      Object.freeze({
        key,
        ...(field === undefined ? {} : { field }),
        message,
        text: `${where}${field === undefined ? '' : `field ${JSON.stringify(field)}: `}${message}`,
      }),
    );
  };
  for (const [key, raw] of Object.entries(values ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const decoded = decodeEntry(raw);
    if (!decoded.ok) {
      problem(key, decoded.detail.message);
      continue;
    }
    const checked = checkAgainst(McpEntrySchema, decoded.value);
    if (!checked.ok) {
      for (const detail of checked.details) problem(key, detail.message, detail.field);
      continue;
    }
    const remote = checked.data['remote-name'];
    const token = checked.data['auth-token'];
    entries.set(
      key,
      Object.freeze({
        key,
        url: checked.data.url.trim(),
        remoteName: remote !== null && remote !== undefined && remote.trim() !== '' ? remote : key,
        authToken: token !== null && token !== undefined && token !== '' ? token : undefined,
      }),
    );
  }
  return { entries, problems };
}
