/**
 * Errors of the MCP layer (stable codes in docs/errors.md): why discovering an MCP tool's input schema
 * failed. The reasons are a fixed list: they label the metric `tg_agent_mcp_discovery_failures_total{reason}`,
 * so a server cannot create series.
 */
import { CodedError } from '../errors/index.js';

export const DISCOVERY_FAILURE_REASONS = [
  /** No connection: refused, DNS failure, reset, TLS error. */
  'unreachable',
  /** No complete answer within `--mcp-discovery-timeout`. */
  'timeout',
  /** HTTP 401 or 403: the `auth-token` is missing or wrong. */
  'unauthorized',
  /** Another HTTP error status (404: wrong path; 5xx: server error). */
  'http',
  /** The server answered, but not with a valid MCP `initialize` / `tools/list` exchange. */
  'protocol',
  /** The server does not list the tool named by `remote-name` (default: the `mcp` key). */
  'tool-not-listed',
  /** The tool's `inputSchema` is not a usable JSON Schema object. */
  'malformed-schema',
  /** The `mcp` config entry itself is invalid (see its problem). */
  'bad-config',
] as const;

export type DiscoveryFailureReason = (typeof DISCOVERY_FAILURE_REASONS)[number];

/** A failed discovery: a reason from the fixed list and a message saying what to check. */
export class McpDiscoveryError extends CodedError {
  override readonly name = 'McpDiscoveryError';
  readonly code = 'TG_MCP_DISCOVERY_FAILED';
  constructor(
    readonly reason: DiscoveryFailureReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
