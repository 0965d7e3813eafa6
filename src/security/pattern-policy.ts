/**
 * Which orchestration pattern a client may name in a first request (the group policy's `allowed-patterns`).
 * TrustGraph runs whatever pattern a request names; one `supervisor` request costs a decomposition, up to
 * `max_subagents` ReAct conversations and a synthesis, so an operator who configured only `react` must be able
 * to hold clients to it:
 *
 * - `"configured"` (the default, also without a policy): the patterns the workspace's `agent-pattern` entries
 *   name; a workspace without such entries lets a client name any pattern, as TrustGraph does.
 * - `"any"`: TrustGraph's behaviour everywhere.
 * - a list of pattern ids: exactly those.
 *
 * Only a client's choice is checked: a request without a pattern goes to the meta-router (which picks among
 * the configured patterns), and continuing iterations and subagent requests carry what their conversation
 * was let start with. Like `initial-states`, this holds against a client writing its own history only with
 * `--signing-key`.
 */
import type { PatternCatalog } from '../agent/index.js';
import { quote } from '../errors/index.js';
import type { AgentRequest } from '../wire/index.js';
import type { AllowedPatterns } from '../groups/index.js';

export type PatternDecision = { allowed: true } | { allowed: false; message: string };

export function checkPattern(
  workspace: string,
  allowedPatterns: AllowedPatterns,
  catalog: PatternCatalog | undefined,
  request: AgentRequest,
): PatternDecision {
  const { pattern } = request;
  const first = request.history.length === 0 && request.correlation_id === '';
  if (!first || pattern === '' || allowedPatterns === 'any') return { allowed: true };
  const allowed = allowedPatterns === 'configured' ? catalog?.listedPatterns : allowedPatterns;
  if (allowed === undefined || allowed.has(pattern)) return { allowed: true };
  const names = [...allowed].sort().map((p) => quote(p));
  const source =
    allowedPatterns === 'configured'
      ? "the workspace's agent-pattern entries (the group policy's allowed-patterns: \"configured\")"
      : "the group policy's allowed-patterns";
  return {
    allowed: false,
    message:
      `Pattern ${quote(pattern)} is not allowed in workspace ${quote(workspace)}: a request may name ${names.length > 0 ? names.join(', ') : 'none'}, ` +
      `from ${source}; send no pattern to let the meta-router choose`,
  };
}
