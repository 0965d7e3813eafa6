/**
 * The arguments of one `mcp-tool` tool when discovery is on (design decision 9 (docs/design.md)):
 *
 * - declared `arguments` are the contract: shown and validated as always; the server's schema, when
 *   known, is only compared with them and every difference reported as drift;
 * - no declared arguments: the server's input schema supplies them (prompt form + JSON Schema validator);
 * - the schema unknown (not fetched yet, server down, malformed schema): the declared arguments, or none.
 *
 * Drift and failures become warnings on the tool (logged with the registry, listed at /tools/<workspace>)
 * and a per-tool report (listing, metrics). Pure and synchronous. `discoveryArgumentSource` hands a snapshot
 * to the registry builder as its `ArgumentSource`.
 */
import {
  type ArgumentOrigin,
  type ArgumentSource,
  type ArgumentSourceStatus,
  type ArgumentsReport,
  type ArgumentValidator,
  compileArguments,
  type ProblemDetail,
  type ToolArgument,
} from '../tools/index.js';
import { quote } from '../errors/index.js';
import type { DiscoveryFailureReason } from './errors.js';
import type { McpDiscoveryLookup } from './discovery-result.js';
import { compareArguments, type DriftFinding } from './drift.js';

/** Where a tool's arguments came from. */
export type McpArgumentSource = ArgumentOrigin;

/** Discovery as it applies to one tool: `not-configured` when its `mcp-tool` key is not in config type `mcp`. */
export type McpToolDiscoveryStatus = ArgumentSourceStatus;

/** Per tool, for the listing and the metrics. */
export interface McpArgumentsReport extends ArgumentsReport {
  readonly reason: DiscoveryFailureReason | null;
  /** Declared vs server differences; empty unless arguments are declared and the schema is known. */
  readonly drift: readonly DriftFinding[];
}

export interface ResolvedMcpArguments {
  readonly arguments: readonly ToolArgument[];
  readonly validator: ArgumentValidator;
  readonly report: McpArgumentsReport;
  /** Warnings for the tool's entry. */
  readonly problems: readonly ProblemDetail[];
}

const NONE = compileArguments([]);

/** A tool's report: what `fields` say, nothing found (no server name, failure or drift) for the rest. */
function reportOf(mcpKey: string, fields: Pick<McpArgumentsReport, 'source' | 'discovery'> & Partial<McpArgumentsReport>): McpArgumentsReport {
  return Object.freeze({ mcpKey, remoteName: null, reason: null, error: null, drift: [], ...fields });
}

const sources = new WeakMap<McpDiscoveryLookup, ArgumentSource>();

/** A discovery snapshot as the registry builder's argument source: one object per snapshot, so its load cache holds. */
export function discoveryArgumentSource(lookup: McpDiscoveryLookup): ArgumentSource {
  let source = sources.get(lookup);
  if (!source) {
    source = { resolve: (mcpKey, declared) => resolveMcpArguments(mcpKey, declared, lookup) };
    sources.set(lookup, source);
  }
  return source;
}

/**
 * @param declared the tool's configured arguments (empty: none configured) and their compiled validator
 * @param lookup the workspace's discovery snapshot
 */
export function resolveMcpArguments(
  mcpKey: string,
  declared: { readonly arguments: readonly ToolArgument[]; readonly validator: ArgumentValidator },
  lookup: McpDiscoveryLookup,
): ResolvedMcpArguments {
  const discovery = lookup.get(mcpKey);
  const hasDeclared = declared.arguments.length > 0;
  const fallback = (): Pick<ResolvedMcpArguments, 'arguments' | 'validator'> =>
    hasDeclared ? { arguments: declared.arguments, validator: declared.validator } : { arguments: declared.arguments, validator: NONE };
  const source: McpArgumentSource = hasDeclared ? 'declared' : 'none';

  if (discovery === undefined) {
    return {
      ...fallback(),
      report: reportOf(mcpKey, { source, discovery: 'not-configured' }),
      problems: [
        {
          field: 'mcp-tool',
          severity: 'warning',
          message:
            `no entry ${quote(mcpKey)} in config type "mcp": arguments cannot be discovered, and TrustGraph's mcp-tool ` +
            `service will answer "MCP service ${mcpKey} not known"; add it with tg-set-mcp-tool`,
        },
      ],
    };
  }
  const where = `MCP tool ${quote(discovery.remoteName)} (mcp key ${quote(mcpKey)})`;

  if (discovery.status === 'pending') {
    return {
      ...fallback(),
      report: reportOf(mcpKey, { remoteName: discovery.remoteName, source, discovery: 'pending' }),
      problems: [],
    };
  }

  if (discovery.status === 'failed') {
    const problems: ProblemDetail[] = [
      {
        field: hasDeclared ? 'mcp-tool' : 'arguments',
        severity: 'warning',
        message: hasDeclared
          ? `the input schema of ${where} could not be read (${discovery.reason}), so drift is not checked: ${discovery.error}`
          : `the arguments of ${where} could not be discovered (${discovery.reason}); the tool is offered without arguments until ` +
            `discovery succeeds: ${discovery.error}`,
      },
    ];
    return {
      ...fallback(),
      report: reportOf(mcpKey, { remoteName: discovery.remoteName, source, discovery: 'failed', reason: discovery.reason, error: discovery.error }),
      problems,
    };
  }

  if (!hasDeclared) {
    return {
      arguments: discovery.schema.arguments,
      validator: discovery.schema.validator,
      report: reportOf(mcpKey, { remoteName: discovery.remoteName, source: 'discovered', discovery: 'ok' }),
      problems: [],
    };
  }

  const drift = Object.freeze(compareArguments(declared.arguments, discovery.schema.properties).map((f) => Object.freeze(f)));
  return {
    ...fallback(),
    report: reportOf(mcpKey, { remoteName: discovery.remoteName, source, discovery: 'ok', drift }),
    problems: drift.map((finding) => ({
      field: 'arguments',
      severity: 'warning' as const,
      message: `drift from ${where}: ${finding.message}; the declared arguments stay in force`,
    })),
  };
}
