import { describe, expect, it } from 'vitest';
import { checkGroups, parsePolicy } from '../../../src/security/group-policy.js';

const policy = (value: unknown) => parsePolicy('ws', { policy: JSON.stringify(value) });

describe('group policy', () => {
  it('lets everything through when the workspace has no policy (TrustGraph behaviour)', () => {
    expect(parsePolicy('ws', {}).policy).toBeUndefined();
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
    const broken = parsePolicy('ws', { policy: '{nope' });
    expect(broken.problem).toMatch(/workspace "ws": group policy is not valid JSON/);
    expect(checkGroups(broken.policy, ['default'])).toMatchObject({ allowed: false });
    const wrong = policy({ 'allowed-groups': 'default' });
    expect(wrong.problem).toMatch(/field "allowed-groups"/);
  });
});
