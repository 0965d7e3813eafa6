import { describe, expect, it } from 'vitest';
import { isAvailable, isOverloaded, withdrawnGroups, type AvailabilityRule } from '../../../src/groups/availability.js';
import { DownstreamLoad, serviceOfTarget } from '../../../src/observability/downstream-load.js';
import { effectiveGroups, parsePolicy } from '../../../src/groups/policy.js';
import { normalizeRequestGroups } from '../../../src/groups/selection.js';
import { PATTERN_IDS } from '../../../src/agent/patterns/pattern-table.js';

const rule = (windows: NonNullable<AvailabilityRule['windows']>, zone = 'America/New_York', groups = ['trading']): AvailabilityRule => ({ groups, tools: [], 'time-zone': zone, windows });
const weekdays: NonNullable<AvailabilityRule['windows']>[number]['days'] = ['mon', 'tue', 'wed', 'thu', 'fri'];

describe('group availability windows', () => {
  it('opens a group in its local hours on its days, in its own time zone', () => {
    const market = rule([{ days: weekdays, from: '09:30', to: '16:00' }]);
    expect(isAvailable(market, new Date('2026-12-04T15:00:00Z'))).toBe(true); // Friday 10:00 in New York
    expect(isAvailable(market, new Date('2026-12-04T14:29:00Z'))).toBe(false); // 09:29
    expect(isAvailable(market, new Date('2026-12-04T14:30:00Z'))).toBe(true); // 09:30: from is inclusive
    expect(isAvailable(market, new Date('2026-12-04T21:00:00Z'))).toBe(false); // 16:00: to is exclusive
    expect(isAvailable(market, new Date('2026-12-05T15:00:00Z'))).toBe(false); // Saturday
    expect(isAvailable(rule([{ days: weekdays, from: '09:30', to: '16:00' }], 'Asia/Tokyo'), new Date('2026-12-04T15:00:00Z'))).toBe(false); // Saturday 00:00 in Tokyo
  });

  it('runs a window past midnight into the next day, and never opens one without days', () => {
    const night = rule([{ days: ['fri'], from: '22:00', to: '06:00' }], 'UTC');
    expect(isAvailable(night, new Date('2026-12-04T23:00:00Z'))).toBe(true); // Friday evening
    expect(isAvailable(night, new Date('2026-12-05T05:59:00Z'))).toBe(true); // Saturday morning, the same window
    expect(isAvailable(night, new Date('2026-12-05T23:00:00Z'))).toBe(false); // Saturday evening
    expect(isAvailable(night, new Date('2026-12-04T05:00:00Z'))).toBe(false); // Friday morning: Thursday is not listed
    expect(isAvailable(rule([{ days: [], from: '00:00', to: '24:00' }]), new Date())).toBe(false);
    expect(isAvailable(rule([{ days: weekdays.concat(['sat', 'sun']), from: '00:00', to: '24:00' }]), new Date())).toBe(true);
  });

  it('withdraws only the closed groups, the ones below them too under the hierarchy; the policy narrows, never widens', () => {
    const closed = [rule([{ days: [], from: '00:00', to: '24:00' }], 'UTC', ['trading'])];
    const now = new Date('2026-12-04T12:00:00Z');
    expect(withdrawnGroups(closed, ['research', 'trading', 'trading.fx'], now, false)).toEqual([{ group: 'trading', reason: 'time-window' }]);
    expect(withdrawnGroups(closed, ['research', 'trading', 'trading.fx'], now, true)).toEqual([
      { group: 'trading', reason: 'time-window' },
      { group: 'trading.fx', reason: 'time-window' },
    ]);
    const { policy } = parsePolicy('ws', {
      policy: JSON.stringify({ 'allowed-groups': ['research', 'trading'], availability: [{ groups: ['trading'], windows: [{ days: [], from: '00:00', to: '24:00' }] }] }),
    }, PATTERN_IDS);
    const effective = effectiveGroups(policy, normalizeRequestGroups(['research', 'trading']), new Set(['research', 'trading']), { now });
    expect(effective).toEqual({ groups: ['research'], wildcard: false, withdrawn: [{ group: 'trading', reason: 'time-window' }] });
  });

  it('refuses a malformed rule as a policy problem, naming the field', () => {
    for (const [availability, field] of [
      [[{ groups: ['trading'], 'time-zone': 'Mars/Olympus', windows: [{ from: '09:00', to: '17:00' }] }], 'availability.0.time-zone'],
      [[{ groups: ['trading'], windows: [{ from: '9:00', to: '17:00' }] }], 'availability.0.windows.0.from'],
      [[{ groups: ['trading'], windows: [{ days: ['monday'], from: '09:00', to: '17:00' }] }], 'availability.0.windows.0.days.0'],
      [[{ groups: [], windows: [{ from: '09:00', to: '17:00' }] }], 'availability.0'],
    ] as const) {
      const parsed = parsePolicy('ws', { policy: JSON.stringify({ 'allowed-groups': ['trading'], availability }) }, PATTERN_IDS);
      expect(parsed.problems, field).toEqual([expect.stringContaining(`field "${field}"`)]);
      expect(parsed.policy?.allowedGroups.size).toBe(0);
    }
  });
});

describe('group load rules', () => {
  const loadRule = (load: NonNullable<AvailabilityRule['load']>): AvailabilityRule => ({ groups: ['research'], tools: [], 'time-zone': 'UTC', load });

  it('judge a service on its calls of the last window, and only once it has enough of them', () => {
    const clock = { now: 1_000_000 };
    const load = new DownstreamLoad(() => clock.now);
    const rule = loadRule({ service: 'graph-rag', 'max-error-rate': 0.5, 'max-latency-seconds': 10, 'window-seconds': 60, 'min-calls': 3 });
    load.record('graph-rag', 1, true);
    load.record('graph-rag', 1, true);
    expect(isOverloaded(rule, load)).toBe(false); // two calls: too few to judge
    load.record('graph-rag', 1, false);
    expect(load.recent('graph-rag', 60_000)).toEqual({ calls: 3, errorRate: 2 / 3, meanSeconds: 1 });
    expect(isOverloaded(rule, load)).toBe(true); // 2 of 3 failed
    clock.now += 61_000;
    expect(isOverloaded(rule, load)).toBe(false); // the window moved past them
    for (let i = 0; i < 3; i++) load.record('graph-rag', 12, false);
    expect(isOverloaded(rule, load)).toBe(true); // slow: a 12 s mean over the 10 s limit
    expect(isOverloaded(loadRule({ service: 'prompt', 'max-error-rate': 0, 'window-seconds': 60, 'min-calls': 1 }), load)).toBe(false); // no calls to it
    expect(withdrawnGroups([rule], ['research', 'default'], new Date(), false, load)).toEqual([{ group: 'research', reason: 'load' }]);
    expect(serviceOfTarget('graph-rag-request')).toBe('graph-rag');
  });

  it('judge a busy service on its latest 1 000 calls, however many it has had', () => {
    const load = new DownstreamLoad(() => 1_000_000);
    for (let i = 0; i < 2_500; i++) load.record('prompt', 1, true);
    for (let i = 0; i < 700; i++) load.record('prompt', 3, false);
    // The latest 1 000: 300 failed calls of 1 s, then 700 good ones of 3 s.
    expect(load.recent('prompt', 60_000)).toEqual({ calls: 1_000, errorRate: 0.3, meanSeconds: 2.4 });
  });
});
