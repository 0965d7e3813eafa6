/**
 * The port through which something outside the tool config supplies an `mcp-tool` tool's arguments:
 * MCP argument discovery (`src/mcp/`) implements it, the registry builder calls it. Declared here so that
 * the tools layer does not depend on MCP; MCP depends on the tools layer.
 *
 * A source is one immutable snapshot: the registry's load cache reuses loaded tools only while it is
 * handed the very same source object, so an implementation returns one object per snapshot.
 */
import type { ProblemDetail } from '../config/problems.js';
import type { ArgumentValidator, ToolArgument } from './arguments.js';

/** Where a tool's arguments came from. */
export type ArgumentOrigin = 'declared' | 'discovered' | 'none';

/** The source's state for one tool: `not-configured` when the source does not know the tool's key. */
export type ArgumentSourceStatus = 'ok' | 'pending' | 'failed' | 'not-configured';

/** One difference between the declared arguments and the source's. */
export interface ArgumentDifference {
  readonly argument: string;
  readonly kind: string;
  /** The declared side, or null when not declared. */
  readonly declared: string | null;
  /** The source's side, likewise. */
  readonly server: string | null;
  readonly message: string;
}

/** Per tool, for the listing and the metrics. */
export interface ArgumentsReport {
  readonly mcpKey: string;
  readonly remoteName: string | null;
  readonly source: ArgumentOrigin;
  readonly discovery: ArgumentSourceStatus;
  readonly reason: string | null;
  readonly error: string | null;
  /** Declared vs source differences; empty unless arguments are declared and the source's are known. */
  readonly drift: readonly ArgumentDifference[];
}

export interface DeclaredArguments {
  readonly arguments: readonly ToolArgument[];
  readonly validator: ArgumentValidator;
}

export interface ResolvedArguments extends DeclaredArguments {
  readonly report: ArgumentsReport;
  /** Warnings for the tool's entry. */
  readonly problems: readonly ProblemDetail[];
}

export interface ArgumentSource {
  /**
   * The arguments of the `mcp-tool` tool whose `mcp-tool` key is `mcpKey`, given its declared ones (empty:
   * none configured) and their compiled validator. Pure and synchronous.
   */
  resolve(mcpKey: string, declared: DeclaredArguments): ResolvedArguments;
}
