/**
 * Why a tool is or is not offered to a request with these groups and this state: the answer an operator
 * needs when a user says "the agent never uses X". Uses the same selection rules as the registry's filter
 * (selection.ts) and the same group-policy check as the request gate, so it cannot disagree with them.
 */
import { distance } from 'fastest-levenshtein';
import {
  checkGroups,
  effectiveGroups,
  type GroupPolicy,
  inRequestedGroups,
  inState,
  type LoadReader,
  normalizeRequestGroups,
  normalizeRequestState,
  type RequestGroups,
  type WithdrawalReason,
} from '../groups/index.js';
import type { ToolRegistry } from '../tools/index.js';

export type HiddenReason =
  | { readonly kind: 'unknown-tool'; readonly message: string; readonly didYouMean: readonly string[] }
  | { readonly kind: 'group-policy'; readonly message: string }
  | { readonly kind: 'not-in-groups'; readonly message: string; readonly toolGroups: readonly string[] }
  | { readonly kind: 'withdrawn'; readonly message: string; readonly groups: readonly string[] }
  | { readonly kind: 'tool-withdrawn'; readonly message: string }
  | { readonly kind: 'not-in-state'; readonly message: string; readonly toolStates: readonly string[] };

export interface ToolVerdict {
  readonly workspace: string;
  readonly tool: string;
  /** The request's groups and state after TrustGraph's defaults. */
  readonly groups: readonly string[];
  readonly state: string;
  readonly offered: boolean;
  /** Empty when offered; else every reason, in the order the agent applies them. */
  readonly reasons: readonly HiddenReason[];
}

const quoted = (names: readonly string[]): string => names.map((n) => `"${n}"`).join(', ');

export function whyHidden(
  registry: ToolRegistry,
  policy: GroupPolicy | undefined,
  request: { groups: RequestGroups; state: string | null | undefined },
  toolName: string,
  load?: LoadReader,
): ToolVerdict {
  const requested = normalizeRequestGroups(request.groups);
  const state = normalizeRequestState(request.state);
  const base = { workspace: registry.workspace, tool: toolName, groups: requested.groups, state };
  const reasons: HiddenReason[] = [];

  const decision = checkGroups(policy, requested);
  if (!decision.allowed) reasons.push({ kind: 'group-policy', message: `the group policy refuses the whole request: ${decision.message}` });

  const tool = registry.get(toolName);
  if (!tool) {
    const didYouMean = closestNames(toolName, registry.tools.map((t) => t.name));
    reasons.push({
      kind: 'unknown-tool',
      message:
        `workspace "${registry.workspace}" has no tool "${toolName}"` +
        (didYouMean.length > 0 ? `; did you mean ${quoted(didYouMean)}?` : ` (its tools: ${quoted(registry.tools.map((t) => t.name).slice(0, 20))})`),
      didYouMean,
    });
    return { ...base, offered: false, reasons };
  }
  const effective = effectiveGroups(policy, requested, registry.knownGroups, load ? { load } : {});
  const withdrawn = (effective.withdrawn ?? []).filter((w) => tool.groups.includes(w.group));
  if (!inRequestedGroups(tool, effective) && withdrawn.length > 0) {
    reasons.push({
      kind: 'withdrawn',
      message: `its group(s) ${withdrawn.map((w) => `"${w.group}" (${reasonText(w.reason)})`).join(', ')} are withdrawn now (the policy's "availability")`,
      groups: withdrawn.map((w) => w.group),
    });
  } else if (!inRequestedGroups(tool, effective)) {
    reasons.push({
      kind: 'not-in-groups',
      message:
        tool.groups.length === 0
          ? 'it is in no group: only a request with the group "*" is offered it'
          : `not in these groups: it needs one of ${quoted(tool.groups)}`,
      toolGroups: tool.groups,
    });
  }
  const toolRule = effective.withdrawnTools?.find((w) => w.tool === tool.name);
  if (toolRule) {
    reasons.push({ kind: 'tool-withdrawn', message: `the tool itself is withdrawn now: ${reasonText(toolRule.reason)} (the policy's "availability")` });
  }
  if (!inState(tool, state)) {
    const states = tool.states === 'all' ? [] : [...tool.states].sort();
    reasons.push({ kind: 'not-in-state', message: `not available in state "${state}": it is available in ${quoted(states)}`, toolStates: states });
  }
  return { ...base, offered: reasons.length === 0, reasons };
}

function reasonText(reason: WithdrawalReason): string {
  return reason === 'load' ? 'a service it depends on is over its limits' : 'outside its availability windows';
}

/** The known names closest to `name` (edit distance, case ignored), at most three, none further than a third of its length. */
export function closestNames(name: string, known: readonly string[]): string[] {
  const limit = Math.max(2, Math.ceil(name.length / 3));
  return known
    .map((candidate) => ({ candidate, d: distance(name.toLowerCase(), candidate.toLowerCase()) }))
    .filter(({ d }) => d <= limit)
    .sort((a, b) => a.d - b.d || a.candidate.localeCompare(b.candidate))
    .slice(0, 3)
    .map(({ candidate }) => candidate);
}
