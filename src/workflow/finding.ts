/** What the workflow linter reports: one finding per mistake, naming the tools, groups and states involved. */

export type Severity = 'error' | 'warning' | 'info';

/** Every check, in the order its findings are listed within a severity. */
export const LINT_CHECKS = [
  'availability-never-matches',
  'case-colliding-names',
  'dead-end-state',
  'group-near-miss',
  'mcp-arguments-drift',
  'policy-group-unused',
  'state-near-miss',
  'tool-unreachable-by-policy',
  'transition-loses-groups',
  'unknown-key',
  'unreachable-state',
] as const;
export type LintCheck = (typeof LINT_CHECKS)[number];

export interface Finding {
  readonly severity: Severity;
  readonly check: LintCheck;
  readonly message: string;
  readonly tools: readonly string[];
  readonly groups: readonly string[];
  readonly states: readonly string[];
}

export const SEVERITIES: readonly Severity[] = ['error', 'warning', 'info'];

export function finding(
  severity: Severity,
  check: LintCheck,
  message: string,
  involved: Partial<Pick<Finding, 'tools' | 'groups' | 'states'>> = {},
): Finding {
  return { severity, check, message, tools: involved.tools ?? [], groups: involved.groups ?? [], states: involved.states ?? [] };
}
