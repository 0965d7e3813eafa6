import { describe, expect, it } from 'vitest';
import { checkGroups as checkRequested, parsePolicy, type GroupPolicy } from '../../../src/groups/policy.js';
import { normalizeRequestGroups, type RequestGroups } from '../../../src/groups/selection.js';
import { PATTERN_IDS } from '../../../src/agent/patterns/pattern-table.js';

/** The policy check on a request's raw `group`, with the request defaults applied first (as the agent does). */
const checkGroups = (policy: GroupPolicy | undefined, groups: RequestGroups) => checkRequested(policy, normalizeRequestGroups(groups));

const policy = (value: unknown) => parsePolicy('ws', { policy: JSON.stringify(value) }, PATTERN_IDS);

describe('group policy', () => {
  it('lets everything through when the workspace has no policy (TrustGraph behaviour)', () => {
    expect(parsePolicy('ws', {}, PATTERN_IDS).policy).toBeUndefined();
    expect(checkGroups(undefined, ['admin', 'anything'])).toEqual({ allowed: true });
  });

  it('allows requests within the listed groups, including the null default group', () => {
    const { policy: p } = policy({ 'allowed-groups': ['default', 'read-only'] });
    expect(checkGroups(p, ['read-only'])).toEqual({ allowed: true });
    expect(checkGroups(p, null)).toEqual({ allowed: true });
    expect(checkGroups(p, [])).toEqual({ allowed: true });
  });

  it('refuses groups over the policy, naming them', () => {
    const { policy: p } = policy({ 'allowed-groups': ['read-only'] });
    const decision = checkGroups(p, ['read-only', 'admin', 'write']);
    expect(decision).toMatchObject({ allowed: false, deniedGroups: ['admin', 'write'], wildcard: false });
    expect(decision.allowed ? '' : decision.message).toBe('Insufficient permissions for requested tool groups: "admin", "write"');
    // The default group is not implicitly allowed.
    expect(checkGroups(p, null)).toMatchObject({ allowed: false, deniedGroups: ['default'] });
  });

  it('refuses "*" unless the policy allows the wildcard', () => {
    expect(checkGroups(policy({ 'allowed-groups': ['a'] }).policy, ['*'])).toMatchObject({ allowed: false, wildcard: true });
    expect(checkGroups(policy({ 'allowed-groups': [], 'allow-wildcard': true }).policy, ['*'])).toEqual({ allowed: true });
    expect(checkGroups(policy({ 'allowed-groups': ['a'] }).policy, '*')).toMatchObject({ allowed: false });
  });

  it('fails closed on a malformed policy and says why', () => {
    const broken = parsePolicy('ws', { policy: '{nope' }, PATTERN_IDS);
    expect(broken.problems).toEqual([expect.stringMatching(/workspace "ws": group policy is not valid JSON/)]);
    expect(checkGroups(broken.policy, ['default'])).toMatchObject({ allowed: false });
    const wrong = policy({ 'allowed-groups': 'default' });
    expect(wrong.problems).toEqual([expect.stringMatching(/field "allowed-groups"/)]);
    expect(parsePolicy('ws', {}, PATTERN_IDS).problems).toEqual([]);
  });

  it('fails closed on unknown fields instead of ignoring them', () => {
    const typo = policy({ 'allowed-groups': ['default'], 'initial_states': ['analysis'] });
    expect(typo.problems).toEqual([expect.stringMatching(/unknown field\(s\) "initial_states"/)]);
    expect(checkGroups(typo.policy, ['default'])).toMatchObject({ allowed: false });
    expect(policy(['default']).problems).toEqual([expect.stringMatching(/must be a JSON object, got a list/)]);
  });

  it('reports a policy stored under another key, failing closed, never silently "no policy"', () => {
    const misplaced = parsePolicy('ws', { policies: JSON.stringify({ 'allowed-groups': ['default'] }) }, PATTERN_IDS);
    expect(misplaced.problems).toEqual([expect.stringMatching(/config key "policies" is not read .*every group is refused/)]);
    expect(checkGroups(misplaced.policy, ['default'])).toMatchObject({ allowed: false });
    const proto = parsePolicy('ws', Object.fromEntries([['__proto__', '{}']]), PATTERN_IDS);
    expect(proto.problems).toEqual([expect.stringMatching(/config key "__proto__" is not read/)]);
    // Next to a valid policy, an extra key is reported and ignored.
    const extra = parsePolicy('ws', { policy: JSON.stringify({ 'allowed-groups': ['a'] }), note: 'x' }, PATTERN_IDS);
    expect(extra.problems).toEqual([expect.stringMatching(/config key "note" is not read .*ignored/)]);
    expect(checkGroups(extra.policy, ['a'])).toEqual({ allowed: true });
  });

  it('reads the initial states', () => {
    expect(policy({ 'allowed-groups': [] }).policy?.initialStates).toBeUndefined();
    expect([...(policy({ 'allowed-groups': [], 'initial-states': ['analysis'] }).policy?.initialStates ?? [])]).toEqual(['analysis']);
  });
  it('reports availability rules that can never withdraw anything: group "*", a service the agent does not call, a group no request runs with', () => {
    const always = [{ from: '00:00', to: '24:00' }];
    const parsed = policy({
      'allowed-groups': ['advanced', 'research', 'knowledge.read'],
      availability: [
        { groups: ['*'], windows: always },
        { groups: ['research'], load: { service: 'nope', 'max-error-rate': 0.5 } },
        { groups: ['Advanced', 'research', 'knowledge'], windows: always },
        { groups: ['research'], load: { service: 'graph-rag', 'max-error-rate': 0.5 } },
      ],
    });
    expect(parsed.problems).toEqual([
      'workspace "ws": group policy availability rule 1 names group "*", which never matches: a rule withdraws groups a request runs with, and a "*" request is never narrowed; name the groups to withdraw',
      'workspace "ws": group policy availability load service "nope" (rule 2) is not one the agent calls (prompt, graph-rag, mcp-tool, structured-query, embeddings, row-embeddings-query, librarian): that load condition never closes its rule',
      'workspace "ws": group policy availability names group "Advanced" (rule 3; did you mean "advanced"?), "knowledge" (rule 3), which allowed-groups does not allow: no request runs with them, so their rules never withdraw them',
    ]);
    // Reported, not refused: the rules stay in force.
    expect(parsed.policy?.availability).toHaveLength(4);
    expect(checkGroups(parsed.policy, ['research'])).toEqual({ allowed: true });
    // With the hierarchy a rule on a group above or below an allowed one meets requests.
    const tree = policy({ 'allowed-groups': ['knowledge.read'], 'group-hierarchy': true, availability: [{ groups: ['knowledge', 'knowledge.read.deep'], windows: always }] });
    expect(tree.problems).toEqual([]);
  });
});
