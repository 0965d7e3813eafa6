/**
 * IterationRecorder: the events of real iterations (ReAct iterations with a fake model and tools) turned into
 * metric values and one audit line per iteration.
 */
import { describe, expect, it } from 'vitest';
import type { FlowDefinition } from '../../../src/config/flows.js';
import { AuditTrail, type AuditRecord } from '../../../src/observability/audit.js';
import { IterationRecorder } from '../../../src/observability/iteration-recorder.js';
import { AgentMetrics } from '../../../src/observability/metrics.js';
import { askOf } from '../../../src/groups/selection.js';
import { makeAgentRequest, makeAgentStep, makeToolResponse, type AgentRequestInput } from '../../../src/wire/index.js';
import { capturingLogger } from '../../support/log-capture.js';
import { act, answer, graphAnswer, iterate, TOOLS, type IterationRunOptions } from '../../support/iteration-run.js';
import { registryOf } from '../../support/registry-fixtures.js';
import { sample } from '../../support/prometheus-text.js';
import { knowledgeQueryTool } from '../../../dev/flow-config.js';

const FLOW: FlowDefinition = { workspace: 'ws', flow: 'default', topics: {}, parameters: {}, fingerprint: 'f' };
const p = { processor: 'agent-manager' };

/** Run one iteration with a recorder on fresh metrics; its audit line and the metrics scrape. */
async function recorded(options: IterationRunOptions, input: AgentRequestInput) {
  const metrics = new AgentMetrics('agent-manager', { defaultMetrics: false });
  // Label values of configured names only (others are counted as "other"): the app does this on every rebuild.
  metrics.registryRebuilt(registryOf(TOOLS).registry, 0);
  const capture = capturingLogger();
  const request = makeAgentRequest(input);
  const recorder = new IterationRecorder(metrics, new AuditTrail(capture.logger), FLOW, askOf(request), 'req-1');
  const run = await iterate({ ...options, events: recorder }, input);
  recorder.done(run.result);
  const audits = capture.audits() as unknown as AuditRecord[];
  return { run, recorder, audits, audit: audits[0]!, text: await metrics.registry.metrics() };
}

describe('IterationRecorder', () => {
  it('audits a tool step: offered and filtered tools, the tool used, the transition and the outcome', async () => {
    const { audits, audit, text } = await recorded(
      { model: act('lookup', '{"question": "q"}'), graphRag: graphAnswer('a') },
      { question: 'q', group: ['read-only'], session_id: 's-1' },
    );
    expect(audits).toHaveLength(1);
    expect(audit).toMatchObject({
      audit: 'agent-iteration',
      request_id: 'req-1',
      workspace: 'ws',
      flow: 'default',
      session_id: 's-1',
      iteration: 1,
      requested_groups: ['read-only'],
      initial_state: 'undefined',
      final_state: 'analysis',
      offered_tools: ['lookup'],
      filtered_by_group: ['analyse', 'wipe'],
      filtered_by_group_count: 2,
      action: 'lookup',
      tools_used: [{ tool: 'lookup', groups: ['read-only'], ok: true }],
      denials: [],
      outcome: 'next',
      error: null,
    });
    expect(audit.transitions).toEqual([expect.objectContaining({ tool: 'lookup', from: 'undefined', to: 'analysis' })]);
    expect(sample(text, 'tg_agent_tool_group_requests_total', { ...p, group: 'read-only' })).toBe(1);
    expect(sample(text, 'tg_agent_tool_invocation_total', { ...p, tool: 'lookup' })).toBe(1);
    expect(sample(text, 'tg_agent_state_transitions_total', { ...p, tool: 'lookup', from: 'undefined', to: 'analysis' })).toBe(1);
    expect(sample(text, 'tg_agent_filtered_tools_count_sum', p)).toBe(1);
  });

  it('names the session on a first request without one: the id its next request and later audit lines carry', async () => {
    const { run, audit } = await recorded({ model: act('lookup', '{"question": "q"}'), graphRag: graphAnswer('a') }, { question: 'q', group: ['read-only'] });
    expect(audit.session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(run.next[0]!.session_id).toBe(audit.session_id);
  });

  it('lists the first 50 tools left out for each reason and counts them all, in config-key order', () => {
    const name = (prefix: string, i: number) => `${prefix}-${String(i).padStart(3, '0')}`;
    const tools: Record<string, unknown> = {};
    for (let i = 0; i < 120; i++) tools[name('other', i)] = knowledgeQueryTool(name('other', i), 'x', { group: ['other'] });
    for (let i = 0; i < 70; i++) tools[name('later', i)] = knowledgeQueryTool(name('later', i), 'x', { group: ['g'], 'applicable-states': ['s'] });
    for (let i = 0; i < 3; i++) tools[name('now', i)] = knowledgeQueryTool(name('now', i), 'x', { group: ['g'] });
    const set = registryOf(tools).registry.filter(['g'], null);
    const capture = capturingLogger();
    const request = makeAgentRequest({ question: 'q', group: ['g'] });
    const recorder = new IterationRecorder(new AgentMetrics('agent-manager', { defaultMetrics: false }), new AuditTrail(capture.logger), FLOW, askOf(request), 'req-1');
    recorder.toolsOffered(set);
    recorder.done({ outcome: 'next', stateBefore: 'undefined' });
    const audit = capture.audits()[0] as unknown as AuditRecord;
    const first50 = (prefix: string) => Array.from({ length: 50 }, (_, i) => name(prefix, i));
    expect(audit).toMatchObject({
      offered_tools: ['now-000', 'now-001', 'now-002'],
      filtered_by_group: first50('other'),
      filtered_by_group_count: 120,
      filtered_by_state: first50('later'),
      filtered_by_state_count: 70,
    });
    // The whole lists, built when read (the listing's `offered`), agree with the counts and the first names.
    expect(set.filteredByGroup).toEqual(Array.from({ length: 120 }, (_, i) => name('other', i)));
    expect(set.filteredByState).toEqual(Array.from({ length: 70 }, (_, i) => name('later', i)));
    expect(set.leftOutBy('other-119')).toBe('group');
    expect(set.leftOutBy('later-069')).toBe('state');
    expect(set.leftOutBy('now-000')).toBeUndefined();
  });

  it('counts each tool offered, never-offered ones at 0, and the groups requested together, on the first iteration', async () => {
    const { text } = await recorded(
      { model: answer('done') },
      { question: 'q', group: ['read-only', 'admin', 'made-up', 'advanced'] },
    );
    expect(sample(text, 'tg_agent_tool_offered_total', { ...p, tool: 'lookup' })).toBe(1);
    expect(sample(text, 'tg_agent_tool_offered_total', { ...p, tool: 'wipe' })).toBe(1);
    // `analyse` needs the state analysis: offered never, shown at 0.
    expect(sample(text, 'tg_agent_tool_offered_total', { ...p, tool: 'analyse' })).toBe(0);
    // Every unordered pair once, in label order; a name no tool is in counts as "other".
    const pairs: [string, string][] = [
      ['admin', 'advanced'], ['admin', 'other'], ['admin', 'read-only'],
      ['advanced', 'other'], ['advanced', 'read-only'], ['other', 'read-only'],
    ];
    for (const [group, other] of pairs) expect(sample(text, 'tg_agent_group_pair_requests_total', { ...p, group, with: other }), `${group}+${other}`).toBe(1);
    expect(text.match(/^tg_agent_group_pair_requests_total\{/gm)).toHaveLength(pairs.length);

    const step = makeAgentStep({ thought: 't', action: 'lookup', arguments: {}, observation: 'o' });
    const later = await recorded({ model: answer('done') }, { question: 'q', group: ['read-only', 'admin'], history: [step] });
    expect(later.text).not.toMatch(/^tg_agent_group_pair_requests_total\{/m);
  });

  it('counts group requests on the first iteration only', async () => {
    const step = makeAgentStep({ thought: 't', action: 'lookup', arguments: {}, observation: 'o' });
    const { audit, text } = await recorded({ model: answer('done') }, { question: 'q', group: ['read-only'], history: [step] });
    expect(audit).toMatchObject({ iteration: 2, outcome: 'answer' });
    expect(sample(text, 'tg_agent_tool_group_requests_total', { ...p, group: 'read-only' }) ?? 0).toBe(0);
    expect(sample(text, 'tg_agent_session_total', { ...p, outcome: 'completed' })).toBe(1);
    expect(sample(text, 'tg_agent_iteration_count_sum', p)).toBe(2);
  });

  it('records a tool that was not offered as a denial, and a failing tool as not ok', async () => {
    const denied = await recorded({ model: act('wipe', '{}') }, { question: 'q', group: ['read-only'] });
    expect(denied.audit.denials).toEqual([
      expect.objectContaining({ kind: 'tool-not-offered', tool: 'wipe', detail: 'configured but not offered' }),
    ]);
    expect(sample(denied.text, 'tg_agent_tool_denied_total', { ...p, tool: 'wipe' })).toBe(1);

    const failing = await recorded(
      { model: act('analyse', '{"dataset": "d"}'), mcp: () => makeToolResponse({ error: { type: 'tool-error', message: 'boom' } }) },
      { question: 'q', group: ['advanced'], state: 'analysis' },
    );
    expect(failing.audit.tools_used).toEqual([{ tool: 'analyse', groups: ['advanced'], ok: false }]);
    expect(failing.audit.final_state).toBe('analysis');
    expect(sample(failing.text, 'tg_agent_tool_error_total', { ...p, tool: 'analyse' })).toBe(1);
  });

  it('lists and counts undeclared arguments', async () => {
    const { audit, text } = await recorded(
      { model: act('analyse', '{"dataset": "d", "extra": 1, "more": 2}'), mcp: () => makeToolResponse({ text: 'ok' }) },
      { question: 'q', group: ['advanced'], state: 'analysis' },
    );
    expect(audit.undeclared_arguments).toEqual([
      { tool: 'analyse', argument: 'extra', action: 'dropped' },
      { tool: 'analyse', argument: 'more', action: 'dropped' },
    ]);
    expect(audit.undeclared_arguments_count).toBe(2);
    expect(sample(text, 'tg_agent_undeclared_arguments_total', { ...p, tool: 'analyse', action: 'dropped' })).toBe(2);
  });

  it('writes one audit line however often it is told the iteration finished', async () => {
    const { recorder, run, audits } = await recorded({ model: answer('x') }, { question: 'q' });
    recorder.done(run.result);
    expect(audits).toHaveLength(1);
  });

  it('audits an error ending with its message', async () => {
    const { audit, text } = await recorded({ model: act('wipe', '{}'), settings: { strictTools: true } }, { question: 'q', group: ['read-only'] });
    expect(audit).toMatchObject({ outcome: 'error', error: 'No action for wipe!' });
    expect(sample(text, 'tg_agent_session_total', { ...p, outcome: 'error' })).toBe(1);
  });
});
