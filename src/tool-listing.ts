/**
 * The read-only tool listing served at `/tools` (TG-20, docs/requirements.md): every workspace's groups, states and tools, the
 * entries that failed to load with their reasons, the group policy and its problems, the parts of config
 * changes that failed to apply, the running flows, and — with
 * `?groups=a,b&state=s` — exactly what a request with those groups and state would be offered; with `&tool=X`
 * also whether X is offered and, if not, why. The workflow linter's findings are in every workspace's listing.
 */
import type { McpDiscovery } from './mcp/index.js';
import type { SecurityGate } from './security/index.js';
import { effectiveGroups, normalizeRequestGroups, normalizeRequestState } from './groups/index.js';
import { withoutTools } from './tools/index.js';
import type { AgentService } from './service.js';
import { whyHidden, type WorkflowChecks } from './workflow/index.js';
import type { AnswerRecommendations } from './observability/index.js';

export function toolListing(
  service: AgentService,
  gate: SecurityGate,
  workspace: string | undefined,
  query: URLSearchParams,
  { mcpDiscovery, workflow, recommendations }: { mcpDiscovery?: McpDiscovery | undefined; workflow?: WorkflowChecks; recommendations?: AnswerRecommendations } = {},
): unknown {
  if (workspace === undefined) {
    return {
      config_version: service.configVersion,
      workspaces: service.registries.all().map((r) => ({
        workspace: r.workspace,
        version: r.version,
        tools: r.tools.length,
        problems: r.problems.length,
      })),
      flows: service.runningFlows().map((f) => ({ workspace: f.workspace, flow: f.flow, request: f.topics.request })),
      flow_problems: service.problemsOfFlows(),
      config_failures: service.failuresOfConfig(),
    };
  }
  const registry = service.registries.all().find((r) => r.workspace === workspace);
  if (!registry) return undefined;
  const policy = gate.policyOf(workspace);
  const body: Record<string, unknown> = {
    ...registry.listing(),
    policy: policy
      ? {
          allowed_groups: [...policy.allowedGroups].sort(),
          allow_wildcard: policy.allowWildcard,
          initial_states: policy.initialStates ? [...policy.initialStates].sort() : null,
          unknown_groups: policy.unknownGroups,
          allowed_patterns: typeof policy.allowedPatterns === 'string' ? policy.allowedPatterns : [...policy.allowedPatterns].sort(),
          group_hierarchy: policy.groupHierarchy,
          availability: policy.availability,
        }
      : null,
    policy_problems: gate.problemsOf(workspace),
    ...(workflow ? { workflow_findings: workflow.findingsOf(workspace), workflow_findings_pending: workflow.pending(workspace) } : {}),
    ...(recommendations ? { recommendations: recommendations.of(workspace) } : {}),
    config_failures: service.failuresOfConfig(workspace),
  };
  // design decision 9 (docs/design.md): every `mcp` entry's discovery state (each mcp-tool's own report is under tools[].mcp).
  if (mcpDiscovery !== undefined) body.mcpDiscovery = mcpDiscovery.listing(workspace);
  const tool = query.get('tool');
  if (tool !== null) {
    // Why is this tool hidden? `?tool=X&groups=a,b&state=s` (groups and state as in the offered set below).
    body.why = whyHidden(registry, policy, { groups: groupsParam(query), state: query.get('state') }, tool, gate.load);
  }
  if (query.has('groups') || query.has('state')) {
    const groups = effectiveGroups(policy, normalizeRequestGroups(groupsParam(query)), registry.knownGroups, gate.load ? { load: gate.load } : {});
    const withdrawn = new Set((groups.withdrawnTools ?? []).map((w) => w.tool));
    const toolSet = withoutTools(registry, withdrawn).offer({ groups, state: normalizeRequestState(query.get('state')) });
    body.offered = {
      groups: toolSet.groups,
      state: toolSet.state,
      tools: toolSet.names,
      filtered_by_group: toolSet.filteredByGroup,
      filtered_by_state: toolSet.filteredByState,
      ...(toolSet.withdrawn ? { withdrawn: toolSet.withdrawn } : {}),
    };
  }
  return body;
}

/** `?groups=a,b` as a request's groups; null (TrustGraph's default, `["default"]`) when absent. */
export function groupsParam(query: URLSearchParams): string[] | null {
  return query.has('groups') ? (query.get('groups') ?? '').split(',').map((g) => g.trim()).filter((g) => g !== '') : null;
}
