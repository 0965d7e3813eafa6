/**
 * The group policy (TG-13 (docs/requirements.md), the spec's §6; TrustGraph has none): per workspace, which tool groups a request
 * may ask for, whether `"*"` is allowed, and optionally which states a conversation may start in. It lives in
 * its own config type (default `agent-group-policy`), key `policy`, value e.g.
 * `{"allowed-groups": ["default", "read-only"], "allow-wildcard": false, "initial-states": ["undefined"],
 * "unknown-groups": "warn", "allowed-patterns": "configured", "group-hierarchy": false}`.
 * A workspace without entries in that type behaves as TrustGraph does: any group, any state; a requested group
 * that no tool of the workspace is in is let through (it matches nothing) and warned about.
 *
 * Anything else in the type is a problem, never silently "no policy": a malformed or unknown field, or a
 * policy stored under another key, denies every group (fail closed) until it is fixed; an extra key next to
 * a valid `policy` is reported and ignored.
 */
import { z } from 'zod';
import type { TypeValues } from '../config/workspace-config.js';
import { describeValue, quote } from '../tools/describe-value.js';
import { DEFAULT_GROUP, WILDCARD, type AgentAsk, type RequestedGroups } from '../tools/registry/selection.js';
import { expandGroupHierarchy, isWithin } from '../tools/registry/group-hierarchy.js';
import { PATTERN_IDS } from '../agent/patterns/catalog.js';
import { DEFAULT_ALLOWED_PATTERNS, type AllowedPatterns } from './pattern-policy.js';
import {
  AvailabilityRuleSchema,
  withdrawals,
  type AvailabilityRule,
  type LoadReader,
  type ToolWithdrawal,
  type Withdrawal,
} from './group-availability.js';
import { FallbackGroupsSchema, type FallbackGroups } from './group-fallback.js';
import { listNames } from '../errors/error-text.js';

export const POLICY_KEY = 'policy';

const PolicySchema = z.strictObject({
  'allowed-groups': z.array(z.string()),
  'allow-wildcard': z.boolean().default(false),
  /** States a conversation may start in; absent: any (TrustGraph's behaviour). */
  'initial-states': z.array(z.string()).optional(),
  /** What a requested group that no tool of the workspace is in does (the spec's open question on invalid names). */
  'unknown-groups': z.enum(['ignore', 'warn', 'reject']).default('warn'),
  /** The patterns a client may name in a first request (pattern-policy.ts). */
  'allowed-patterns': z.union([z.enum(['configured', 'any']), z.array(z.string())]).default(DEFAULT_ALLOWED_PATTERNS),
  /** Dotted group names form a tree: a group stands for itself and everything below it (group-hierarchy.ts). */
  'group-hierarchy': z.boolean().default(false),
  /** Groups offered only in time windows (group-availability.ts). */
  availability: z.array(AvailabilityRuleSchema).default([]),
  /** Groups a request that names `+fallback` runs with when its own give it no tool (group-fallback.ts). */
  'fallback-groups': FallbackGroupsSchema.optional(),
});

/**
 * What a requested group no tool is in does: `ignore` (TrustGraph: it matches nothing), `warn` (the same, logged
 * once per name and counted), `reject` (the request ends with an error naming the groups).
 */
export type UnknownGroupsMode = 'ignore' | 'warn' | 'reject';
export const DEFAULT_UNKNOWN_GROUPS: UnknownGroupsMode = 'warn';

export interface GroupPolicy {
  readonly allowedGroups: ReadonlySet<string>;
  readonly allowWildcard: boolean;
  /** Undefined: a first request may name any state. */
  readonly initialStates: ReadonlySet<string> | undefined;
  readonly unknownGroups: UnknownGroupsMode;
  readonly allowedPatterns: AllowedPatterns;
  /** Dotted group names form a tree (group-hierarchy.ts); false: a dot is only a character. */
  readonly groupHierarchy: boolean;
  /** Groups and tools offered only in time windows or under load limits; empty: always. */
  readonly availability: readonly AvailabilityRule[];
  /** Undefined: a request cannot opt into fallback groups (`+fallback` is an ordinary group name). */
  readonly fallbackGroups?: FallbackGroups;
}

export interface PolicyParse {
  readonly policy: GroupPolicy | undefined;
  /** Every problem found, each a sentence naming the workspace. Empty when the type is as expected. */
  readonly problems: readonly string[];
}

const FAIL_CLOSED = 'every group is refused until it is fixed';

/** Read a workspace's entries of the policy config type. */
export function parsePolicy(workspace: string, values: TypeValues): PolicyParse {
  const where = `workspace ${quote(workspace)}`;
  const problems: string[] = [];
  const others = Object.keys(values).filter((key) => key !== POLICY_KEY);
  const hasPolicy = Object.hasOwn(values, POLICY_KEY);
  for (const key of others.slice(0, 20)) {
    problems.push(
      `${where}: group policy config key ${quote(key)} is not read (the policy must be stored under key "${POLICY_KEY}")` +
        (hasPolicy ? '; ignored' : `; ${FAIL_CLOSED}`),
    );
  }
  if (others.length > 20) problems.push(`${where}: ${others.length - 20} more group policy config keys other than "${POLICY_KEY}"`);
  if (!hasPolicy) return { policy: others.length > 0 ? denyAll() : undefined, problems };

  let json: unknown;
  try {
    json = JSON.parse(values[POLICY_KEY] ?? '');
  } catch (error) {
    problems.push(`${where}: group policy is not valid JSON (${(error as Error).message}); ${FAIL_CLOSED}`);
    return { policy: denyAll(), problems };
  }
  const parsed = PolicySchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const detail =
      issue?.code === 'unrecognized_keys'
        ? `unknown field(s) ${issue.keys.slice(0, 10).map((k) => quote(k)).join(', ')} (known: allowed-groups, allow-wildcard, initial-states, unknown-groups, allowed-patterns, group-hierarchy, availability, fallback-groups)`
        : issue?.path.length
          ? `field "${issue.path.join('.')}": ${issue.message}`
          : `must be a JSON object, got ${describeValue(json)}`;
    problems.push(`${where}: group policy ${detail}; ${FAIL_CLOSED}`);
    return { policy: denyAll(), problems };
  }
  const states = parsed.data['initial-states'];
  const patterns = parsed.data['allowed-patterns'];
  const unknownPatterns = Array.isArray(patterns) ? patterns.filter((p) => !(PATTERN_IDS as readonly string[]).includes(p)) : [];
  if (unknownPatterns.length > 0) {
    problems.push(
      `${where}: group policy allowed-patterns names ${unknownPatterns.slice(0, 10).map((p) => quote(p)).join(', ')}, which this agent does not ` +
        `run (${PATTERN_IDS.join(', ')}); a request naming one runs react`,
    );
  }
  const fallback = parsed.data['fallback-groups'];
  const allowedGroups = new Set(parsed.data['allowed-groups']);
  const notAllowed = Array.isArray(fallback) ? fallback.filter((group) => !isAllowed({ allowedGroups, groupHierarchy: parsed.data['group-hierarchy'] }, group)) : [];
  if (notAllowed.length > 0) {
    problems.push(
      `${where}: group policy fallback-groups names ${notAllowed.slice(0, 10).map((g) => quote(g)).join(', ')}, which allowed-groups does not ` +
        'allow; a fallback never uses them',
    );
  }
  return {
    policy: {
      allowedGroups,
      allowWildcard: parsed.data['allow-wildcard'],
      initialStates: states === undefined ? undefined : new Set(states),
      unknownGroups: parsed.data['unknown-groups'],
      allowedPatterns: Array.isArray(patterns) ? new Set(patterns) : patterns,
      groupHierarchy: parsed.data['group-hierarchy'],
      availability: parsed.data.availability,
      ...(fallback === undefined ? {} : { fallbackGroups: fallback }),
    },
    problems,
  };
}

function denyAll(): GroupPolicy {
  return {
    allowedGroups: new Set(),
    allowWildcard: false,
    initialStates: undefined,
    unknownGroups: DEFAULT_UNKNOWN_GROUPS,
    allowedPatterns: DEFAULT_ALLOWED_PATTERNS,
    groupHierarchy: false,
    availability: [],
  };
}

export type PolicyDecision = { allowed: true } | { allowed: false; deniedGroups: string[]; wildcard: boolean; message: string };

/** May a request ask for these groups? */
export function checkGroups(policy: GroupPolicy | undefined, requested: RequestedGroups): PolicyDecision {
  if (!policy) return { allowed: true };
  const { wildcard, groups } = requested;
  const denied = wildcard
    ? policy.allowWildcard
      ? []
      : [WILDCARD]
    : groups.filter((group) => !isAllowed(policy, group));
  if (denied.length === 0) return { allowed: true };
  return {
    allowed: false,
    deniedGroups: denied,
    wildcard: denied.includes(WILDCARD),
    message: `Insufficient permissions for requested tool groups: ${listNames(denied)}`,
  };
}

/**
 * The groups a request runs with under `policy` at `now`: with its group hierarchy, widened to the known groups
 * below; then without the groups its availability rules withdraw now (`withdrawn`: outside their windows, or
 * while a service they depend on is over its limits in `load`).
 */
export function effectiveGroups(
  policy: GroupPolicy | undefined,
  requested: RequestedGroups,
  knownGroups: ReadonlySet<string>,
  options: { now?: Date; load?: LoadReader } = {},
): EffectiveGroups {
  if (!policy) return requested;
  const widened = policy.groupHierarchy ? expandGroupHierarchy(requested, knownGroups) : requested;
  if (widened.wildcard || policy.availability.length === 0) return widened;
  const now = options.now ?? new Date();
  const { groups: withdrawn, tools } = withdrawals(policy.availability, widened.groups, now, policy.groupHierarchy, options.load);
  const toolsPart = tools.length > 0 ? { withdrawnTools: tools } : {};
  if (withdrawn.length === 0) return tools.length > 0 ? { ...widened, ...toolsPart } : widened;
  const gone = new Set(withdrawn.map((w) => w.group));
  return { groups: widened.groups.filter((group) => !gone.has(group)), wildcard: false, withdrawn, ...toolsPart };
}

/** A request's groups under its workspace's policy, with what the availability rules withdrew now. */
export type EffectiveGroups = RequestedGroups & {
  /** Groups withdrawn from the request (not in `groups`). */
  readonly withdrawn?: readonly Withdrawal[];
  /** Single tools withdrawn now: not offered whatever the groups. */
  readonly withdrawnTools?: readonly ToolWithdrawal[];
};

/** An allowed group, or (with the hierarchy) one below an allowed group. */
export function isAllowed(policy: Pick<GroupPolicy, 'allowedGroups' | 'groupHierarchy'>, group: string): boolean {
  if (policy.allowedGroups.has(group)) return true;
  return policy.groupHierarchy && [...policy.allowedGroups].some((allowed) => isWithin(group, allowed));
}

/** May a conversation start in the request's state? Only first requests (empty history) are checked. */
export function checkInitialState(policy: GroupPolicy | undefined, ask: AgentAsk): { allowed: true } | { allowed: false; message: string } {
  const allowed = policy?.initialStates;
  // A subagent's first request (it carries its supervisor's `correlation_id`) continues that conversation.
  const continuing = ask.request.history.length > 0 || ask.request.correlation_id !== '';
  if (!allowed || continuing) return { allowed: true };
  const { state } = ask;
  if (allowed.has(state)) return { allowed: true };
  const names = [...allowed].sort().map((s) => quote(s));
  return {
    allowed: false,
    message: `Conversation refused: it may not start in state ${quote(state)}; allowed initial states: ${names.length > 0 ? names.join(', ') : '(none)'}`,
  };
}

/**
 * The requested groups that no tool of the workspace is in. `"*"` is never unknown, nor is `"default"` (what a
 * request without groups asks for, in every workspace).
 */
export function unknownGroupsOf(requested: RequestedGroups, knownGroups: ReadonlySet<string>, hierarchy = false): string[] {
  if (requested.wildcard) return [];
  const known = (group: string): boolean => knownGroups.has(group) || (hierarchy && [...knownGroups].some((k) => isWithin(k, group)));
  return requested.groups.filter((group) => group !== DEFAULT_GROUP && !known(group));
}
