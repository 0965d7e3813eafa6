/**
 * Metrics, audit trail, group policy and signed iterations of the whole app (src/app.ts) on any harness transport:
 * metric values read from a real HTTP scrape, audit lines from the real logger.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SIGNATURE_PROPERTY } from '../../src/security/iteration-signature.js';
import type { AgentRequest } from '../../src/wire/index.js';
import type { PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import { harnessPerTest, onTarget, type HarnessTarget } from '../support/harness-per-test.js';
import { capturingLogger, type LogCapture } from '../support/log-capture.js';
import { responsesToRefused } from '../support/no-reply.js';
import { knowledgeQueryTool } from '../../dev/flow-config.js';
import { checkDashboardMetrics, parseExposition as metricFamilies } from '../support/dashboard-metrics.js';
import { sample, scrape } from '../support/prometheus-text.js';
import { loadSpecExample, WORKFLOW_GROUPS, workflowScript } from '../support/spec-tools.js';

const history = (terms: PromptTerms) => terms.history as unknown[];

export function observabilitySuite(target: HarnessTarget): void {
  describe(onTarget('observability', target), () => {
    const start = harnessPerTest(target);

    describe('metrics of the spec §5.2 (docs/requirements.md) workflow, scraped over HTTP', () => {
      it('moves every TG-16 metric as the workflow goes', async () => {
        const h = await start({
          app: {},
          tools: loadSpecExample().tool,
          script: workflowScript,
          mcpTools: { 'analysis-server': () => 'analysed', 'workflow-server': () => 'reset' },
        });
        await h.ask({ question: 'Company X?', group: WORKFLOW_GROUPS, state: 'undefined' });
        const text = await scrape(h.httpUrl());
        const p = { processor: 'agent-manager' };
        const ws = { ...p, workspace: h.workspace };

        // Requests per group: one conversation asked for each of the five groups.
        for (const group of WORKFLOW_GROUPS) expect(sample(text, 'tg_agent_tool_group_requests_total', { ...p, group })).toBe(1);
        expect(sample(text, 'tg_agent_tool_group_requests_total', { ...p, group: 'write' })).toBe(0);
        // Tools available per group and per state, from the configuration.
        expect(sample(text, 'tg_agent_tool_group_availability', { ...ws, group: 'admin' })).toBe(2);
        expect(sample(text, 'tg_agent_tool_group_availability', { ...ws, group: 'knowledge' })).toBe(2);
        expect(sample(text, 'tg_agent_tool_group_availability', { ...ws, group: 'advanced' })).toBe(1);
        expect(sample(text, 'tg_agent_state_availability', { ...ws, state: 'analysis' })).toBe(4);
        expect(sample(text, 'tg_agent_state_availability', { ...ws, state: 'undefined' })).toBe(2);
        expect(sample(text, 'tg_agent_state_availability', { ...ws, state: 'results' })).toBe(2);
        // Offered-tool counts: 2, 4, 2, 2 over four iterations.
        expect(sample(text, 'tg_agent_filtered_tools_count_count', p)).toBe(4);
        expect(sample(text, 'tg_agent_filtered_tools_count_sum', p)).toBe(10);
        // State transitions by tool.
        const transition = (tool: string, from: string, to: string) =>
          sample(text, 'tg_agent_state_transitions_total', { ...p, tool, from, to });
        expect(transition('Knowledge Graph Query', 'undefined', 'analysis')).toBe(1);
        expect(transition('Complex Analysis Tool', 'analysis', 'results')).toBe(1);
        expect(transition('Reset Workflow', 'results', 'undefined')).toBe(1);
        // Time in each state: iterations that ran in it.
        expect(sample(text, 'tg_agent_workflow_duration_seconds_count', { ...p, state: 'undefined' })).toBe(2);
        expect(sample(text, 'tg_agent_workflow_duration_seconds_count', { ...p, state: 'analysis' })).toBe(1);
        expect(sample(text, 'tg_agent_workflow_duration_seconds_count', { ...p, state: 'results' })).toBe(1);
        // Nothing was denied, refused or invalid — and those series exist at 0.
        expect(sample(text, 'tg_agent_group_access_denied_total', { ...p, group: 'admin' })).toBe(0);
        expect(sample(text, 'tg_agent_privilege_escalation_attempts_total', { ...p, reason: 'bad-signature' })).toBe(0);
        expect(sample(text, 'tg_agent_tool_denied_total', { ...p, tool: 'Graph Update' })).toBe(0);
        // Series that counters of unconfigured names (`other`) start from, so alerts see their first increase.
        expect(sample(text, 'tg_agent_invalid_state_transition_total', { ...p, state: 'other' })).toBe(0);
        expect(sample(text, 'tg_agent_group_access_denied_total', { ...p, group: 'other' })).toBe(0);
        expect(sample(text, 'tg_agent_tool_denied_total', { ...p, tool: 'other' })).toBe(0);
        // TrustGraph's own metrics.
        expect(sample(text, 'tg_agent_session_total', { ...p, outcome: 'completed' })).toBe(1);
        expect(sample(text, 'tg_agent_iteration_count_sum', p)).toBe(4);
        expect(sample(text, 'tg_agent_tool_invocation_total', { ...p, tool: 'Complex Analysis Tool' })).toBe(1);
        expect(sample(text, 'tg_agent_llm_duration_seconds_count', p)).toBe(4);
        expect(sample(text, 'tg_config_version', p)).toBe(h.config.version);
        const request = h.flows.default!.topics.request!;
        expect(sample(text, 'tg_consumer_processing_total', { ...p, consumer: request, status: 'ok' })).toBe(4);
        expect(sample(text, 'tg_consumer_processing_total', { ...p, consumer: request, status: 'error' })).toBe(0);
        expect(sample(text, 'tg_agent_ready', p)).toBe(1);
        expect(sample(text, 'tg_producer_messages_total', { ...p, producer: request })).toBe(3);

        // TrustGraph's downstream-call metrics: four prompt calls, one graph RAG query, two MCP tool calls.
        const downstream = (target: string) => sample(text, 'tg_downstream_call_duration_seconds_count', { ...p, target_service: target });
        expect(downstream('prompt-request')).toBe(4);
        expect(downstream('graph-rag-request')).toBe(1);
        expect(downstream('mcp-tool-request')).toBe(2);

        // The Grafana dashboard asks only for metrics and labels this scrape has.
        const dashboard = JSON.parse(readFileSync(new URL('../../deploy/grafana/dashboards/tg-agent.json', import.meta.url), 'utf8')) as unknown;
        expect(checkDashboardMetrics(dashboard, metricFamilies(text))).toEqual([]);
      });

      it('counts an unconfigured group, state or tool as "other"', async () => {
        const h = await start({
          app: {},
          tools: { a: knowledgeQueryTool('lookup', 'Look up', { group: ['read-only'] }) },
          script: (terms) => (history(terms).length === 0 ? 'Thought: x\nAction: made_up_tool\nArgs: {}' : 'Thought: y\nFinal Answer: z'),
        });
        await h.ask({ question: 'q', group: ['read-only', 'group-nobody-configured'], state: 'state-nobody-knows' });
        const text = await scrape(h.httpUrl());
        const p = { processor: 'agent-manager' };
        expect(sample(text, 'tg_agent_tool_group_requests_total', { ...p, group: 'other' })).toBe(1);
        expect(sample(text, 'tg_agent_tool_group_requests_total', { ...p, group: 'read-only' })).toBe(1);
        expect(sample(text, 'tg_agent_tool_denied_total', { ...p, tool: 'other' })).toBe(1);
        expect(sample(text, 'tg_agent_invalid_state_transition_total', { ...p, state: 'other' })).toBe(2);
        expect(text).not.toContain('group-nobody-configured');
        expect(text).not.toContain('state-nobody-knows');
        expect(text).not.toContain('made_up_tool');
      });
    });

    describe('the group policy', () => {
      it('refuses groups over the policy with the spec\'s message, counts them, and lets the rest through', async () => {
        const h = await start({ app: {}, tools: { a: knowledgeQueryTool('lookup', 'Look up', { group: ['read-only', 'admin'] }) } });
        await h.config.put(h.workspace, 'agent-group-policy', 'policy', { 'allowed-groups': ['read-only'] });
        await h.configApplied();

        const refused = await h.ask({ question: 'q', group: ['read-only', 'admin'] });
        expect(refused.last).toMatchObject({
          message_type: 'error',
          end_of_dialog: true,
          error: { type: 'agent-error', message: 'Insufficient permissions for requested tool groups: "admin"' },
        });
        expect(h.prompt.calls).toHaveLength(0);
        const wildcard = await h.ask({ question: 'q', group: ['*'] });
        expect(wildcard.last.error?.message).toBe('Insufficient permissions for requested tool groups: "*"');

        const allowed = await h.ask({ question: 'q', group: ['read-only'] });
        expect(allowed.last).toMatchObject({ message_type: 'answer', end_of_dialog: true });

        const text = await scrape(h.httpUrl());
        const p = { processor: 'agent-manager' };
        expect(sample(text, 'tg_agent_group_access_denied_total', { ...p, group: 'admin' })).toBe(1);
        expect(sample(text, 'tg_agent_group_access_denied_total', { ...p, group: '*' })).toBe(1);
        expect(sample(text, 'tg_agent_privilege_escalation_attempts_total', { ...p, reason: 'policy-wildcard' })).toBe(1);
        expect(sample(text, 'tg_agent_group_access_denied_total', { ...p, group: 'read-only' })).toBe(0);

        const listing = (await (await fetch(`${h.httpUrl()}/tools/${h.workspace}`)).json()) as { policy: unknown };
        expect(listing.policy).toEqual({ allowed_groups: ['read-only'], allow_wildcard: false, initial_states: null, unknown_groups: 'warn', allowed_patterns: 'configured', group_hierarchy: false, availability: [] });
      });
    });

    describe('signed iterations', () => {
      const SIGNING_KEY = 'test-signing-key-0123456789';

      async function signedConversation(capture?: LogCapture) {
        const h = await start({
          app: { signingKey: SIGNING_KEY },
          ...(capture ? { logger: capture.logger } : {}),
          tools: {
            a: knowledgeQueryTool('lookup', 'Look up', { group: ['read-only'], state: 'analysis' }),
            b: knowledgeQueryTool('secret', 'Admin only', { group: ['admin'] }),
          },
          script: (terms) =>
            history(terms).length === 0 ? 'Thought: look\nAction: lookup\nArgs: {"question": "q"}' : 'Thought: ok\nFinal Answer: done',
        });
        const result = await h.ask({ question: 'q', group: ['read-only'] });
        return { h, result };
      }

      it('signs every next message, and a signed conversation completes', async () => {
        const { result } = await signedConversation();
        expect(result.nextMessages).toHaveLength(1);
        expect(result.nextMessages[0]!.properties[SIGNATURE_PROPERTY]).toMatch(/^[A-Za-z0-9_-]{43}$/);
        expect(result.last).toMatchObject({ message_type: 'answer', content: 'done', end_of_dialog: true });
      });

      it('refuses a next message whose group or state was changed, or whose signature is missing, and counts it', async () => {
        const capture = capturingLogger();
        const { h, result } = await signedConversation(capture);
        const genuine = result.nextMessages[0]!;
        // No reply to any of them: the id a forged continuation carries may be someone else's dialog.
        const forge = (request: AgentRequest, properties: Record<string, string>) =>
          responsesToRefused(h, capture.audits, request, { ...properties, id: genuine.properties.id ?? '' });

        expect(await forge({ ...genuine.value, group: ['admin'] }, genuine.properties)).toEqual([]);
        expect(await forge({ ...genuine.value, state: 'results' }, genuine.properties)).toEqual([]);
        expect(await forge(genuine.value, {})).toEqual([]);
        const logged = capture.lines.map((l) => String(l.msg));
        expect(logged.filter((m) => /signature does not match/.test(m))).toHaveLength(2);
        expect(logged.filter((m) => /carries no signature/.test(m))).toHaveLength(1);
        expect(h.prompt.reactCalls()).toHaveLength(2);

        const text = await scrape(h.httpUrl());
        const p = { processor: 'agent-manager' };
        expect(sample(text, 'tg_agent_privilege_escalation_attempts_total', { ...p, reason: 'bad-signature' })).toBe(2);
        expect(sample(text, 'tg_agent_privilege_escalation_attempts_total', { ...p, reason: 'missing-signature' })).toBe(1);
      });
    });

    describe('the audit trail', () => {
      it('writes one line per iteration with every TG-17 field', async () => {
        const { logger, audits } = capturingLogger();
        const h = await start({
          app: {},
          logger,
          tools: loadSpecExample().tool,
          script: workflowScript,
          mcpTools: { 'analysis-server': () => 'analysed', 'workflow-server': () => 'reset' },
        });
        const result = await h.ask({ question: 'Company X?', group: ['read-only', 'knowledge', 'advanced', 'compute', 'admin'] });
        await h.waitFor(() => audits().length === 4, 'four audit lines');
        const first = audits()[0]!;
        expect(first).toMatchObject({
          request_id: result.id,
          workspace: h.workspace,
          flow: 'default',
          iteration: 1,
          requested_groups: WORKFLOW_GROUPS,
          initial_state: 'undefined',
          final_state: 'analysis',
          offered_tools: ['Knowledge Graph Query', 'Text Completion'],
          filtered_by_group: [],
          filtered_by_state: ['Complex Analysis Tool', 'Graph Update', 'Reset Workflow'],
          action: 'Knowledge Graph Query',
          tools_used: [{ tool: 'Knowledge Graph Query', groups: ['read-only', 'knowledge', 'basic'], ok: true }],
          denials: [],
          outcome: 'next',
          error: null,
        });
        const transitions = first.transitions as { tool: string; from: string; to: string; at: string }[];
        expect(transitions).toHaveLength(1);
        expect(transitions[0]).toMatchObject({ tool: 'Knowledge Graph Query', from: 'undefined', to: 'analysis' });
        expect(Date.parse(transitions[0]!.at)).toBeGreaterThan(Date.parse(first.started_at as string) - 1);
        expect(first.execution_ms).toBeGreaterThan(0);
        expect(audits().map((a) => [a.iteration, a.initial_state, a.outcome])).toEqual([
          [1, 'undefined', 'next'],
          [2, 'analysis', 'next'],
          [3, 'results', 'next'],
          [4, 'undefined', 'answer'],
        ]);
      });

      it('records a denial for a tool that was not offered', async () => {
        const { logger, audits } = capturingLogger();
        const h = await start({
          app: {},
          logger,
          tools: { a: knowledgeQueryTool('lookup', 'Look up', { group: ['read-only'] }), b: knowledgeQueryTool('secret', 'x', { group: ['admin'] }) },
          script: (terms) => (history(terms).length === 0 ? 'Thought: x\nAction: secret\nArgs: {}' : 'Thought: y\nFinal Answer: z'),
        });
        await h.ask({ question: 'q', group: ['read-only'] });
        await h.waitFor(() => audits().length === 2, 'two audit lines');
        expect(audits()[0]!.filtered_by_group).toEqual(['secret']);
        expect(audits()[0]!.denials).toEqual([
          expect.objectContaining({ kind: 'tool-not-offered', tool: 'secret', detail: 'configured but not offered' }),
        ]);
      });
    });
  });
}
