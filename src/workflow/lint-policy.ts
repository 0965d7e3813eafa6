/**
 * The linter's checks of the tools against the group policy: tools no allowed group reaches, allowed groups
 * no tool has, and availability rules that name a group no tool is in or a tool that does not exist (what
 * the policy alone shows wrong in a rule, `"*"` or an unknown service, is the policy's own problem:
 * src/groups/availability.ts). With the group hierarchy a group reaches the groups below it, as requests do.
 * One pass over the tools and one over the policy; each group costs its depth.
 */
import { quote, quoteList } from '../errors/index.js';
import { ancestorsOf, type GroupPolicy, requestableByRules, WILDCARD } from '../groups/index.js';
import { CHEAP_ITEMS_PER_STEP, type Steps } from '../threads/index.js';
import type { Tool, ToolRegistry } from '../tools/index.js';
import { finding, type Finding } from './finding.js';

/** Every group a tool has and, with the hierarchy, every group above one: the groups a rule or an allowed group can reach tools through. */
function* coveredGroupSteps(tools: readonly Tool[], hierarchy: boolean): Steps<Set<string>> {
  const covered = new Set<string>();
  for (let i = 0; i < tools.length; i++) {
    for (const group of tools[i]!.groups) {
      covered.add(group);
      if (hierarchy) for (const ancestor of ancestorsOf(group)) covered.add(ancestor);
    }
    if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
  }
  return covered;
}

export function* policyFindingSteps(registry: ToolRegistry, policy: GroupPolicy | undefined, out: Finding[]): Steps<void> {
  if (!policy) return;
  const { tools } = registry;
  const allowed = (group: string): boolean =>
    policy.allowedGroups.has(group) || (policy.groupHierarchy && ancestorsOf(group).some((ancestor) => policy.allowedGroups.has(ancestor)));
  // An empty list is also what a policy that failed to load leaves (every group refused).
  const allowedText = policy.allowedGroups.size === 0 ? 'no group' : `${quoteList([...policy.allowedGroups])}${policy.allowWildcard ? '' : ' and no "*"'}`;
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i]!;
    if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
    if (policy.allowWildcard || tool.groups.some(allowed)) continue;
    out.push(
      finding(
        'warning',
        'tool-unreachable-by-policy',
        `tool ${quote(tool.name)} (groups ${tool.groups.length === 0 ? 'none: "*" only' : quoteList(tool.groups)}) cannot be offered to any request: ` +
          `the group policy allows ${allowedText}`,
        { tools: [tool.name], groups: tool.groups },
      ),
    );
  }
  const covered = yield* coveredGroupSteps(tools, policy.groupHierarchy);
  let seen = 0;
  for (const group of policy.allowedGroups) {
    if (!covered.has(group)) out.push(finding('info', 'policy-group-unused', `the group policy allows group ${quote(group)}, which no tool has`, { groups: [group] }));
    if (++seen % CHEAP_ITEMS_PER_STEP === 0) yield;
  }
  yield* availabilitySteps(registry, policy, covered, out);
}

/** Availability rules naming a group no tool is in (nor, with the hierarchy, below it), or a tool the workspace does not have. */
function* availabilitySteps(registry: ToolRegistry, policy: GroupPolicy, covered: ReadonlySet<string>, out: Finding[]): Steps<void> {
  if (policy.availability.length === 0) return;
  // A group no request runs with, or "*", is the policy's own problem (src/groups/availability.ts).
  const requestable = requestableByRules(policy);
  let lowerGroups: Map<string, string> | undefined;
  let lowerTools: Map<string, string> | undefined;
  const didYouMean = (like: string | undefined): string => (like === undefined ? '' : ` (did you mean ${quote(like)}?)`);
  let checked = 0;
  for (const [i, rule] of policy.availability.entries()) {
    for (const group of rule.groups) {
      if (++checked % CHEAP_ITEMS_PER_STEP === 0) yield;
      if (group === WILDCARD || !requestable(group) || covered.has(group)) continue;
      lowerGroups ??= yield* lowerCaseIndex([...covered]);
      out.push(
        finding(
          'warning',
          'availability-never-matches',
          `the group policy's availability rule ${i + 1} names group ${quote(group)}, which no tool is in${policy.groupHierarchy ? ' (nor below it)' : ''}` +
            `${didYouMean(lowerGroups.get(group.toLowerCase()))}: the rule never withdraws a tool through it`,
          { groups: [group] },
        ),
      );
    }
    for (const name of rule.tools) {
      if (++checked % CHEAP_ITEMS_PER_STEP === 0) yield;
      if (registry.get(name) !== undefined) continue;
      lowerTools ??= yield* lowerCaseIndex(registry.tools.map((tool) => tool.name));
      out.push(
        finding(
          'warning',
          'availability-never-matches',
          `the group policy's availability rule ${i + 1} names tool ${quote(name)}, which the workspace does not have` +
            `${didYouMean(lowerTools.get(name.toLowerCase()))}: the rule never withdraws it`,
          { tools: [name] },
        ),
      );
    }
  }
}

/** Lower-cased name → the first name that lower-cases to it. */
function* lowerCaseIndex(names: readonly string[]): Steps<Map<string, string>> {
  const out = new Map<string, string>();
  for (let i = 0; i < names.length; i++) {
    const lower = names[i]!.toLowerCase();
    if (!out.has(lower)) out.set(lower, names[i]!);
    if ((i + 1) % CHEAP_ITEMS_PER_STEP === 0) yield;
  }
  return out;
}
