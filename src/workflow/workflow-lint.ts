/**
 * Mistakes in a workspace's workflow that TrustGraph accepts silently: a misspelt group, a state no tool
 * leads to, a state with no way out, a transition into a state where the tool's own groups can do nothing, a
 * tool no group of the policy reaches, an availability rule that can never withdraw anything. Each finding
 * names the tools, groups and states involved and says what to do. Read by `tg-agent lint`, the HTTP listing
 * and the load-time check (workflow-checks.ts: one log line each, a metric).
 *
 * Every check is linear in the workspace's tools, states and groups, and written as steps (time-slices.ts):
 * the agent runs them in slices between requests, `tg-agent lint` to the end in one go.
 */
import { DEFAULT_STATE, type GroupPolicy } from '../groups/index.js';
import { CHEAP_ITEMS_PER_STEP, runToEnd, type Steps } from '../threads/index.js';
import { quote } from '../errors/index.js';
import type { ToolRegistry } from '../tools/index.js';
import { finding, LINT_CHECKS, SEVERITIES, type Finding } from './finding.js';
import { caseCollisionSteps, groupNearMissSteps, stateNearMissSteps } from './lint-names.js';
import { unknownKeySteps } from './lint-keys.js';
import { policyFindingSteps } from './lint-policy.js';
import { stateFindingSteps } from './lint-states.js';

export { LINT_CHECKS, type Finding, type LintCheck, type Severity } from './finding.js';

/** Every finding for a workspace, errors first, then by check; a check's findings in the workspace's order. */
export function lintWorkflow(registry: ToolRegistry, policy: GroupPolicy | undefined): Finding[] {
  return runToEnd(lintWorkflowSteps(registry, policy));
}

/** The same, as steps (see time-slices.ts). */
export function* lintWorkflowSteps(registry: ToolRegistry, policy: GroupPolicy | undefined): Steps<Finding[]> {
  const found: Finding[] = [];
  yield* unknownKeySteps(registry.tools, found);
  yield* groupNearMissSteps(registry.tools, found);
  yield* stateNearMissSteps(registry.tools, policy?.initialStates ?? new Set([DEFAULT_STATE]), found);
  yield* stateFindingSteps(registry.tools, policy, found);
  yield* policyFindingSteps(registry, policy, found);
  yield* caseCollisionSteps(registry.tools, found);
  yield* mcpDriftSteps(registry, found);
  return yield* orderSteps(found);
}

/** Findings ordered by severity, then by check (a stable bucket sort: no comparison of messages). */
function* orderSteps(found: readonly Finding[]): Steps<Finding[]> {
  const buckets = SEVERITIES.map(() => LINT_CHECKS.map((): Finding[] => []));
  const checkIndex = new Map(LINT_CHECKS.map((check, i) => [check, i]));
  for (let i = 0; i < found.length; i++) {
    const item = found[i]!;
    buckets[SEVERITIES.indexOf(item.severity)]![checkIndex.get(item.check)!]!.push(item);
    if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
  }
  const ordered: Finding[] = [];
  for (const bySeverity of buckets) {
    for (const bucket of bySeverity) {
      for (let i = 0; i < bucket.length; i++) {
        ordered.push(bucket[i]!);
        if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
      }
    }
  }
  return ordered;
}

function* mcpDriftSteps(registry: ToolRegistry, out: Finding[]): Steps<void> {
  let seen = 0;
  for (const [tool, report] of registry.mcp) {
    if (++seen % CHEAP_ITEMS_PER_STEP === 0) yield;
    if (report.drift.length === 0) continue;
    out.push(
      finding(
        'warning',
        'mcp-arguments-drift',
        `tool ${quote(tool)} declares arguments that differ from MCP server ${quote(report.mcpKey)}'s schema: ` +
          report.drift.map((d) => d.message).join('; '),
        { tools: [tool] },
      ),
    );
  }
}
