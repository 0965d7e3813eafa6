/**
 * Mistakes in a workspace's workflow that TrustGraph accepts silently: a misspelt group, a state no tool
 * leads to, a state with no way out, a transition into a state where the tool's own groups can do nothing, a
 * tool no group of the policy reaches. Each finding names the tools, groups and states involved and says what
 * to do. Read by `tg-agent lint`, the HTTP listing and the load-time check (one log line each, a metric).
 */
import { distance } from 'fastest-levenshtein';
import { DEFAULT_STATE, type GroupPolicy, WILDCARD } from '../groups/index.js';
import type { Tool, ToolRegistry } from '../tools/index.js';

export type Severity = 'error' | 'warning' | 'info';

export const LINT_CHECKS = [
  'group-near-miss',
  'unreachable-state',
  'dead-end-state',
  'transition-loses-groups',
  'tool-unreachable-by-policy',
  'policy-group-unused',
  'case-colliding-names',
  'mcp-arguments-drift',
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

const quoted = (names: Iterable<string>): string => [...names].map((n) => `"${n}"`).join(', ');

function finding(severity: Severity, check: LintCheck, message: string, involved: Partial<Pick<Finding, 'tools' | 'groups' | 'states'>> = {}): Finding {
  return { severity, check, message, tools: involved.tools ?? [], groups: involved.groups ?? [], states: involved.states ?? [] };
}

const availableIn = (tool: Tool, state: string): boolean => tool.states === 'all' || tool.states.has(state);

/** Every finding for a workspace, errors first, then by check and message. */
export function lintWorkflow(registry: ToolRegistry, policy: GroupPolicy | undefined): Finding[] {
  const { tools } = registry;
  const findings: Finding[] = [
    ...groupNearMisses(tools),
    ...stateFindings(tools, policy),
    ...policyFindings(tools, policy),
    ...caseCollisions(tools),
    ...mcpDrift(registry),
  ];
  const rank: Record<Severity, number> = { error: 0, warning: 1, info: 2 };
  return findings.sort((a, b) => rank[a.severity] - rank[b.severity] || a.check.localeCompare(b.check) || a.message.localeCompare(b.message));
}

/** A group only one tool has, whose name is a case variant or within two edits of a group other tools use. */
function groupNearMisses(tools: readonly Tool[]): Finding[] {
  const users = new Map<string, string[]>();
  for (const tool of tools) for (const group of tool.groups) users.set(group, [...(users.get(group) ?? []), tool.name]);
  const out: Finding[] = [];
  for (const [group, holders] of users) {
    if (holders.length !== 1) continue;
    const near = [...users.keys()].filter(
      (other) => other !== group && (users.get(other)?.length ?? 0) > 1 && (other.toLowerCase() === group.toLowerCase() || distance(other, group) <= 2),
    );
    if (near.length === 0) continue;
    out.push(
      finding(
        'warning',
        'group-near-miss',
        `group "${group}" is used by tool "${holders[0]}" only, and is close to ${quoted(near)} used by other tools: a misspelling? ` +
          'A request naming the other group is never offered this tool',
        { tools: holders, groups: [group, ...near] },
      ),
    );
  }
  return out;
}

function stateFindings(tools: readonly Tool[], policy: GroupPolicy | undefined): Finding[] {
  const out: Finding[] = [];
  const initial = new Set(policy?.initialStates ?? [DEFAULT_STATE]);
  const ledTo = new Map<string, string[]>();
  for (const tool of tools) if (tool.nextState !== undefined) ledTo.set(tool.nextState, [...(ledTo.get(tool.nextState) ?? []), tool.name]);

  // States a conversation can be in: the initial ones, and every state a tool available in one of them leads to.
  const reachable = new Set(initial);
  for (let grew = true; grew; ) {
    grew = false;
    for (const tool of tools) {
      if (tool.nextState === undefined || reachable.has(tool.nextState)) continue;
      if (tool.states === 'all' || [...tool.states].some((s) => reachable.has(s))) {
        reachable.add(tool.nextState);
        grew = true;
      }
    }
  }
  for (const tool of tools) {
    if (tool.states === 'all' || [...tool.states].some((s) => reachable.has(s))) continue;
    const states = [...tool.states].sort();
    out.push(
      finding(
        'warning',
        'unreachable-state',
        `tool "${tool.name}" is available only in ${quoted(states)}, which no conversation reaches: no tool leads there from ` +
          `the initial state${initial.size > 1 ? 's' : ''} ${quoted([...initial].sort())}. Only a request naming such a state itself is offered it`,
        { tools: [tool.name], states },
      ),
    );
  }
  for (const [state, leaders] of [...ledTo].sort(([a], [b]) => a.localeCompare(b))) {
    const available = tools.filter((t) => availableIn(t, state));
    if (available.length === 0) {
      out.push(
        finding(
          'error',
          'dead-end-state',
          `state "${state}" (reached through ${quoted(leaders)}) has no tool available: a conversation there can only answer, never act ` +
            'or leave it. Make a tool available there (applicable-states) to continue or to reset',
          { tools: leaders, states: [state] },
        ),
      );
      continue;
    }
    for (const leader of leaders) {
      const tool = tools.find((t) => t.name === leader)!;
      if (tool.groups.length === 0) continue;
      const shared = available.filter((t) => t.groups.includes(WILDCARD) || t.groups.some((g) => tool.groups.includes(g)));
      if (shared.length === 0) {
        out.push(
          finding(
            'info',
            'transition-loses-groups',
            `tool "${leader}" (groups ${quoted(tool.groups)}) moves to state "${state}", where no tool of those groups is available ` +
              `(available there: ${quoted(available.map((t) => t.name))}): a request with only those groups can only answer after it`,
            { tools: [leader], groups: tool.groups, states: [state] },
          ),
        );
      }
    }
  }
  return out;
}

function policyFindings(tools: readonly Tool[], policy: GroupPolicy | undefined): Finding[] {
  if (!policy) return [];
  const out: Finding[] = [];
  for (const tool of tools) {
    const reachable = tool.groups.length === 0 ? policy.allowWildcard : tool.groups.some((g) => policy.allowedGroups.has(g)) || policy.allowWildcard;
    if (!reachable) {
      out.push(
        finding(
          'warning',
          'tool-unreachable-by-policy',
          `tool "${tool.name}" (groups ${tool.groups.length === 0 ? 'none: "*" only' : quoted(tool.groups)}) cannot be offered to any request: ` +
            `the group policy allows ${quoted([...policy.allowedGroups].sort())}${policy.allowWildcard ? '' : ' and no "*"'}`,
          { tools: [tool.name], groups: tool.groups },
        ),
      );
    }
  }
  const used = new Set(tools.flatMap((t) => t.groups));
  for (const group of [...policy.allowedGroups].sort()) {
    if (!used.has(group)) {
      out.push(finding('info', 'policy-group-unused', `the group policy allows group "${group}", which no tool has`, { groups: [group] }));
    }
  }
  return out;
}

function caseCollisions(tools: readonly Tool[]): Finding[] {
  const byLower = new Map<string, string[]>();
  for (const tool of tools) byLower.set(tool.name.toLowerCase(), [...(byLower.get(tool.name.toLowerCase()) ?? []), tool.name]);
  return [...byLower.values()]
    .filter((names) => names.length > 1)
    .map((names) =>
      finding('warning', 'case-colliding-names', `tool names ${quoted(names)} differ only in case: a model writing either may get the other`, { tools: names }),
    );
}

function mcpDrift(registry: ToolRegistry): Finding[] {
  const out: Finding[] = [];
  for (const [tool, report] of registry.mcp) {
    if (report.drift.length === 0) continue;
    out.push(
      finding(
        'warning',
        'mcp-arguments-drift',
        `tool "${tool}" declares arguments that differ from MCP server "${report.mcpKey}"'s schema: ` +
          report.drift.map((d) => d.message).join('; '),
        { tools: [tool] },
      ),
    );
  }
  return out;
}
