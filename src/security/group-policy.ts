/**
 * The group policy (TG-13, the spec's §6; TrustGraph has none): per workspace, which tool groups a request
 * may ask for and whether `"*"` is allowed. It lives in its own config type (default `agent-group-policy`),
 * key `policy`, value e.g. `{"allowed-groups": ["default", "read-only"], "allow-wildcard": false}`.
 * A workspace without a policy behaves as TrustGraph does: any group may be asked for.
 */
import { z } from 'zod';
import type { TypeValues } from '../config/workspace-config.js';
import { normalizeRequestGroups, WILDCARD, type RequestGroups } from '../tools/selection.js';

export const POLICY_KEY = 'policy';

const PolicySchema = z.object({
  'allowed-groups': z.array(z.string()),
  'allow-wildcard': z.boolean().default(false),
});

export interface GroupPolicy {
  readonly allowedGroups: ReadonlySet<string>;
  readonly allowWildcard: boolean;
}

export type PolicyParse = { policy: GroupPolicy | undefined; problem?: string };

/** Read a workspace's policy entry. A malformed policy denies every group (fail closed) and says why. */
export function parsePolicy(workspace: string, values: TypeValues): PolicyParse {
  const raw = values[POLICY_KEY];
  if (raw === undefined) return { policy: undefined };
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (error) {
    return { policy: denyAll(), problem: `workspace "${workspace}": group policy is not valid JSON (${(error as Error).message}); every group is refused until it is fixed` };
  }
  const parsed = PolicySchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      policy: denyAll(),
      problem: `workspace "${workspace}": group policy field "${issue?.path.join('.') ?? ''}": ${issue?.message ?? 'invalid'}; every group is refused until it is fixed`,
    };
  }
  return { policy: { allowedGroups: new Set(parsed.data['allowed-groups']), allowWildcard: parsed.data['allow-wildcard'] } };
}

function denyAll(): GroupPolicy {
  return { allowedGroups: new Set(), allowWildcard: false };
}

export type PolicyDecision = { allowed: true } | { allowed: false; deniedGroups: string[]; wildcard: boolean; message: string };

/** May a request ask for these groups? */
export function checkGroups(policy: GroupPolicy | undefined, requested: RequestGroups): PolicyDecision {
  if (!policy) return { allowed: true };
  const { wildcard, groups } = normalizeRequestGroups(requested);
  const denied = wildcard
    ? policy.allowWildcard
      ? []
      : [WILDCARD]
    : groups.filter((group) => !policy.allowedGroups.has(group));
  if (denied.length === 0) return { allowed: true };
  return {
    allowed: false,
    deniedGroups: denied,
    wildcard: denied.includes(WILDCARD),
    message: `Insufficient permissions for requested tool groups: ${denied.map((g) => `"${g}"`).join(', ')}`,
  };
}
