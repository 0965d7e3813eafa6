/**
 * The group rules, in one place (design decisions 3 and 10 (docs/design.md)): a request's groups and state with
 * TrustGraph's defaults (`askOf`), which tools they offer (`inRequestedGroups`, `inState`, `nextState`), the
 * groups a tool inherits, and the workspace's group policy with its hierarchy, time and load windows and fallback
 * groups (`parsePolicy`, `checkGroups`, `effectiveGroups`). The gate, the registry and the patterns call these.
 */
export { type LoadReader, requestableByRules, type ToolWithdrawal, type Withdrawal, type WithdrawalReason } from './availability.js';
export { fallbackCandidates, type RecommendationReader, splitOptIn } from './fallback.js';
export { ancestorsOf } from './hierarchy.js';
export { inheritedGroups } from './inheritance.js';
export {
  type AllowedPatterns,
  checkGroups,
  checkInitialState,
  DEFAULT_ALLOWED_PATTERNS,
  DEFAULT_UNKNOWN_GROUPS,
  effectiveGroups,
  type EffectiveGroups,
  type GroupPolicy,
  isAllowed,
  parsePolicy,
  type UnknownGroupsMode,
  unknownGroupsOf,
} from './policy.js';
export {
  type AgentAsk,
  askOf,
  DEFAULT_GROUP,
  DEFAULT_STATE,
  inRequestedGroups,
  inState,
  nextState,
  normalizeRequestGroups,
  normalizeRequestState,
  type RequestedGroups,
  type RequestGroups,
  type RequestState,
  type ToolStates,
  WILDCARD,
} from './selection.js';
