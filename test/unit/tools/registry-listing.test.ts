// TG-20 (a listing of groups and their tools; docs/requirements.md), TG-16 (metric label values come from known names).
import { describe, expect, it } from 'vitest';
import { registryOf, textTool } from '../../support/registry-fixtures.js';

const { registry } = registryOf(
  {
    a: textTool('reader', { group: ['read', 'basic'], 'applicable-states': ['undefined', 'research'], state: 'analysis' }),
    b: textTool('writer', { group: ['write'], 'applicable-states': ['analysis'], state: 'done' }),
    c: textTool('anytime'),
    d: textTool('hidden', { group: [] }),
    e: { type: 'tool-service', name: 'svc', service: 'joke', audience: 'kids' },
    f: { type: 'nope', name: 'broken' },
  },
  { joke: { 'request-queue': 'rq', 'response-queue': 'rs', 'config-params': ['audience'] } },
  { version: 7 },
);

describe('known groups and states', () => {
  it('hold every group named by a tool, plus "default"', () => {
    expect([...registry.knownGroups].sort()).toEqual(['basic', 'default', 'read', 'write']);
  });

  it('hold every state named by a tool, including state targets, plus "undefined"', () => {
    expect([...registry.knownStates].sort()).toEqual(['analysis', 'done', 'research', 'undefined']);
  });

  it('are there even for an empty registry (the request defaults)', () => {
    const empty = registryOf({}).registry;
    expect([...empty.knownGroups]).toEqual(['default']);
    expect([...empty.knownStates]).toEqual(['undefined']);
  });
});

describe('listing', () => {
  const listing = registry.listing();

  it('names workspace and version', () => {
    expect(listing).toMatchObject({ workspace: 'default', version: 7 });
  });

  it('maps each group to its tools, and lists the "*"-only tools', () => {
    expect(listing.groups).toEqual({
      basic: ['reader'],
      default: ['anytime', 'svc'],
      read: ['reader'],
      write: ['writer'],
    });
    expect(listing.wildcardOnly).toEqual(['hidden']);
  });

  it('maps each known state to the tools offered in it, and lists the every-state tools', () => {
    expect(listing.states).toEqual({
      analysis: ['writer', 'anytime', 'hidden', 'svc'],
      done: ['anytime', 'hidden', 'svc'],
      research: ['reader', 'anytime', 'hidden', 'svc'],
      undefined: ['reader', 'anytime', 'hidden', 'svc'],
    });
    expect(listing.everyState).toEqual(['anytime', 'hidden', 'svc']);
  });

  it('lists every tool with its normalized configuration', () => {
    expect(listing.tools.map((tool) => tool.key)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(listing.tools[0]).toMatchObject({
      key: 'a',
      name: 'reader',
      type: 'text-completion',
      groups: ['read', 'basic'],
      states: ['undefined', 'research'],
      nextState: 'analysis',
      settings: {},
    });
    expect(listing.tools[2]).toMatchObject({ states: '*', nextState: null, groups: ['default'] });
    expect(listing.tools[4]).toMatchObject({ settings: { service: 'joke', configParams: [{ name: 'audience', type: 'string' }] } });
    expect(listing.toolServices).toEqual([{ key: 'joke', requestQueue: 'rq', responseQueue: 'rs', configParams: [{ name: 'audience', required: false }] }]);
  });

  it('includes the problems', () => {
    expect(listing.problems.map((problem) => problem.key)).toEqual(['f']);
  });

  it('is JSON, computed once', () => {
    expect(JSON.parse(JSON.stringify(listing))).toEqual(listing);
    expect(registry.listing()).toBe(listing);
    expect(Object.isFrozen(listing.groups)).toBe(true);
  });
});
