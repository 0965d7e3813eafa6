/**
 * Fallback groups (the tool-group spec's §11.3, recommendations put to use), configured per workspace in its
 * group policy and opted into per request:
 *
 *   "fallback-groups": ["general", "knowledge.read"]     or     "fallback-groups": "recommended"
 *
 * A request that names the group `+fallback` among its groups asks: "if my groups give me no tool in this state,
 * run with the workspace's fallback groups instead". A list names them; `"recommended"` takes the groups that
 * the conversations of the request's task type (`task_type`, `general` when empty) most often ended with an
 * answer under, on this replica (observability/recommendations.ts), at most three. Either way only groups the
 * policy allows are used, and availability rules and the hierarchy apply to them as to any group: a fallback
 * never widens what the policy allows. A request that does not opt in, or a workspace without the field, is
 * unchanged (`+fallback` is then an ordinary, unknown group name).
 */
import { z } from 'zod';

/** The group name a request opts in with. Starts with `+`, which a configured group name has no reason to. */
export const FALLBACK_OPT_IN = '+fallback';

/** At most this many recommended groups are used. */
export const MAX_RECOMMENDED_FALLBACK = 3;

export const FallbackGroupsSchema = z.union([z.array(z.string().min(1)), z.literal('recommended')]);

export type FallbackGroups = z.infer<typeof FallbackGroupsSchema>;

/** The groups conversations of each task type ended with an answer under, most used first. */
export interface RecommendationReader {
  of(workspace: string): Readonly<Record<string, { readonly groups: readonly { readonly name: string }[] }>>;
}

/** Whether the request's groups opt into the fallback, and its groups without the opt-in name. */
export function splitOptIn(groups: readonly string[]): { optedIn: boolean; groups: readonly string[] } {
  if (!groups.includes(FALLBACK_OPT_IN)) return { optedIn: false, groups };
  return { optedIn: true, groups: groups.filter((group) => group !== FALLBACK_OPT_IN) };
}

/** The groups a fallback runs with: the configured list, or the recommended groups of `taskType` that `allowed` accepts. */
export function fallbackCandidates(
  configured: FallbackGroups,
  where: { workspace: string; taskType: string },
  allowed: (group: string) => boolean,
  recommendations: RecommendationReader | undefined,
): string[] {
  if (configured !== 'recommended') return configured.filter(allowed);
  const byType = recommendations?.of(where.workspace) ?? {};
  const taskType = where.taskType || 'general';
  const seen = Object.hasOwn(byType, taskType) ? (byType[taskType]?.groups ?? []) : [];
  return seen
    .map((counted) => counted.name)
    .filter(allowed)
    .slice(0, MAX_RECOMMENDED_FALLBACK);
}
