/**
 * The tool-group spec's open questions (its §12) as tg-agent answers them, end to end on any harness transport,
 * through gateway-shaped requests: a requested group no tool is in, under each of the group policy's
 * `unknown-groups` modes, and groups inherited from a `tool-service` or `mcp` entry; and its future enhancements:
 * hierarchies, availability of groups and single tools, recommendations and fallback groups.
 */
import { describe, expect, it } from 'vitest';
import { offeredToolNames, type PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import { knowledgeQueryTool, mcpTool, toolServiceTool } from '../../dev/flow-config.js';
import { harnessPerTest, onTarget, type HarnessTarget } from '../support/harness-per-test.js';
import { capturingLogger } from '../support/log-capture.js';
import { sample, scrape } from '../support/prometheus-text.js';

const p = { processor: 'agent-manager' };
const answerAtOnce = (_terms: PromptTerms): string => 'Thought: nothing to look up\nFinal Answer: done';

export function groupQuestionsSuite(target: HarnessTarget): void {
  describe(onTarget('the spec open questions on groups', target), () => {
    const start = harnessPerTest(target);

    describe('a requested group no tool is in', () => {
      const tools = { r: knowledgeQueryTool('lookup', 'Research lookup', { group: ['research'] }) };

      it('is let through and warned about once per name by default (TrustGraph: it matches nothing)', async () => {
        const capture = capturingLogger('info');
        const h = await start({ app: {}, logger: capture.logger, tools, script: answerAtOnce });
        const first = await h.ask({ question: 'q', group: ['research', 'reserch'] });
        const second = await h.ask({ question: 'q', group: ['reserch'] });
        for (const result of [first, second]) expect(result.last).toMatchObject({ end_of_dialog: true, error: null });
        expect(offeredToolNames(h.prompt.reactCalls()[0]!)).toEqual(['lookup']);
        expect(offeredToolNames(h.prompt.reactCalls()[1]!)).toEqual([]);
        const warnings = capture.lines.filter((line) => /no tool of workspace .* is in: "reserch"/.test(String(line.msg)));
        expect(warnings).toHaveLength(1);
        const text = await scrape(h.httpUrl());
        expect(sample(text, 'tg_agent_unknown_group_requests_total', { ...p, action: 'warned' })).toBe(2);
        expect(capture.audits().map((a) => a.unknown_groups)).toEqual([['reserch'], ['reserch']]);
      });

      it('costs no more than its size to name: errors, log lines and the audit list a bounded few of many long names', async () => {
        const capture = capturingLogger('info');
        const h = await start({ app: {}, logger: capture.logger, tools, script: answerAtOnce });
        // A 500 KB request (what the WebSocket API carries): a thousand unknown groups of 500 characters each.
        const many = Array.from({ length: 1000 }, (_, i) => `${String(i).padStart(4, '0')}${'g'.repeat(496)}`);
        const warned = await h.ask({ question: 'q', group: many });
        expect(warned.last).toMatchObject({ end_of_dialog: true, error: null });
        const warning = capture.lines.find((line) => /no tool of workspace/.test(String(line.msg)));
        expect(String(warning?.msg)).toMatch(/ and 990 more \(they match nothing/);
        for (const line of capture.lines) expect(JSON.stringify(line).length, String(line.msg).slice(0, 80)).toBeLessThan(20_000);
        expect(capture.auditsOf(warned.id)[0]).toMatchObject({ requested_groups_count: 1000 });

        await h.config.put(h.workspace, 'agent-group-policy', 'policy', { 'allowed-groups': ['research'] });
        await h.configApplied();
        const refused = await h.ask({ question: 'q', group: many });
        expect(refused.last.error?.message).toMatch(/^Insufficient permissions for requested tool groups: "0000g+…", .* and 990 more$/);
        expect(refused.last.error!.message.length).toBeLessThan(2_000);
        // More groups than any request needs: refused while decoding, with a message of its own size.
        const raw = JSON.stringify({ question: 'q', group: Array.from({ length: 1001 }, (_, i) => `g${i}`) });
        const tooMany = await h.ask({ question: 'q' }, { publish: (_topic, _payload, properties) => h.sendRaw(raw, properties) });
        expect(tooMany.last.error?.message).toBe('Cannot decode AgentRequest: field "group": at most 1000 groups, got 1001');
        for (const line of capture.lines) expect(JSON.stringify(line).length, String(line.msg).slice(0, 80)).toBeLessThan(20_000);
      });

      it('ends the request with an error naming it under "reject", before the model is called', async () => {
        const h = await start({ app: {}, tools, script: answerAtOnce });
        await h.config.put(h.workspace, 'agent-group-policy', 'policy', {
          'allowed-groups': ['default', 'research', 'reserch'],
          'unknown-groups': 'reject',
        });
        await h.configApplied();
        const refused = await h.ask({ question: 'q', group: ['reserch'] });
        expect(refused.responses).toHaveLength(1);
        expect(refused.last).toMatchObject({ message_type: 'error', end_of_dialog: true });
        expect(refused.last.error?.message).toBe(
          `Unknown tool group(s) "reserch": no tool of workspace "${h.workspace}" is in it (known groups: "default", "research")`,
        );
        expect(h.prompt.calls).toHaveLength(0);
        const fine = await h.ask({ question: 'q', group: ['research'] });
        expect(fine.last).toMatchObject({ end_of_dialog: true, error: null });
        const text = await scrape(h.httpUrl());
        expect(sample(text, 'tg_agent_unknown_group_requests_total', { ...p, action: 'rejected' })).toBe(1);
        expect(sample(text, 'tg_agent_requests_refused_total', { ...p, reason: 'unknown-group' })).toBe(1);
        const listing = (await (await fetch(`${h.httpUrl()}/tools/${h.workspace}`)).json()) as { policy: { unknown_groups: string } };
        expect(listing.policy.unknown_groups).toBe('reject');
      });

      it('is let through without a warning under "ignore", still counted', async () => {
        const capture = capturingLogger('info');
        const h = await start({ app: {}, logger: capture.logger, tools, script: answerAtOnce });
        await h.config.put(h.workspace, 'agent-group-policy', 'policy', {
          'allowed-groups': ['default', 'research', 'reserch'],
          'unknown-groups': 'ignore',
        });
        await h.configApplied();
        const result = await h.ask({ question: 'q', group: ['reserch'] });
        expect(result.last).toMatchObject({ end_of_dialog: true, error: null });
        expect(capture.lines.filter((line) => /no tool of workspace/.test(String(line.msg)))).toEqual([]);
        const text = await scrape(h.httpUrl());
        expect(sample(text, 'tg_agent_unknown_group_requests_total', { ...p, action: 'ignored' })).toBe(1);
      });
    });

    describe('groups inherited from a tool-service or an mcp entry', () => {
      it('gives a tool without its own group the group of its tool-service or mcp entry; its own group, even [], wins', async () => {
        const args = [{ name: 'q', type: 'string', description: 'Query' }];
        const h = await start({
          app: {},
          toolServices: { weather: { group: ['ops'] } },
          tools: {
            a: toolServiceTool('forecast', 'weather', args),
            b: toolServiceTool('public forecast', 'weather', args, 'Public', { group: ['default'] }),
            c: mcpTool('search', 'search-server', args),
            d: mcpTool('hidden search', 'search-server', args, 'Never offered', { group: [] }),
          },
          script: answerAtOnce,
        });
        await h.config.put(h.workspace, 'mcp', 'search-server', { url: 'http://127.0.0.1:9/mcp', group: ['research'] });
        await h.configApplied();
        for (const group of [['ops'], ['research'], ['default'], ['*']]) await h.ask({ question: 'q', group });
        expect(h.prompt.reactCalls().map(offeredToolNames)).toEqual([
          ['forecast'],
          ['search'],
          ['public forecast'],
          ['forecast', 'public forecast', 'search', 'hidden search'],
        ]);
        const listing = (await (await fetch(`${h.httpUrl()}/tools/${h.workspace}`)).json()) as { tools: { name: string; groups: string[] }[] };
        expect(Object.fromEntries(listing.tools.map((t) => [t.name, t.groups]))).toEqual({
          forecast: ['ops'],
          'public forecast': ['default'],
          search: ['research'],
          'hidden search': [],
        });

        // The entry's group changes: its tools follow without a change of their own.
        await h.config.put(h.workspace, 'mcp', 'search-server', { url: 'http://127.0.0.1:9/mcp', group: ['archive'] });
        await h.configApplied();
        await h.ask({ question: 'q', group: ['archive'] });
        expect(offeredToolNames(h.prompt.reactCalls().at(-1)!)).toEqual(['search']);
      });
    });

    describe('group hierarchies, opted into per workspace', () => {
      const tools = {
        k: knowledgeQueryTool('overview', 'Overview', { group: ['knowledge'] }),
        r: knowledgeQueryTool('read', 'Read', { group: ['knowledge.read'] }),
        d: knowledgeQueryTool('deep-read', 'Deep read', { group: ['knowledge.read.deep'] }),
        w: knowledgeQueryTool('write', 'Write', { group: ['knowledge.write'] }),
        o: knowledgeQueryTool('other', 'Elsewhere', { group: ['knowledgebase'] }),
      };

      it('a group stands for itself and everything below it, for the policy, the model, the audit and the listing', async () => {
        const capture = capturingLogger('info');
        const h = await start({ app: {}, logger: capture.logger, tools, script: answerAtOnce });
        await h.config.put(h.workspace, 'agent-group-policy', 'policy', { 'allowed-groups': ['knowledge.read', 'knowledge'], 'group-hierarchy': true });
        await h.configApplied();

        const whole = await h.ask({ question: 'q', group: ['knowledge'] });
        const read = await h.ask({ question: 'q', group: ['knowledge.read'] });
        for (const result of [whole, read]) expect(result.last).toMatchObject({ end_of_dialog: true, error: null });
        // `knowledgebase` shares a prefix, not a branch: never below `knowledge`.
        expect(offeredToolNames(h.prompt.reactCalls()[0]!).sort()).toEqual(['deep-read', 'overview', 'read', 'write']);
        expect(offeredToolNames(h.prompt.reactCalls()[1]!).sort()).toEqual(['deep-read', 'read']);
        const audits = capture.audits();
        expect(audits.map((a) => a.requested_groups)).toEqual([['knowledge'], ['knowledge.read']]);
        expect(audits[1]?.effective_groups).toEqual(['knowledge.read', 'knowledge.read.deep']);

        const listing = (await (await fetch(`${h.httpUrl()}/tools/${h.workspace}?groups=knowledge.read`)).json()) as {
          policy: { group_hierarchy: boolean };
          offered: { tools: string[] };
        };
        expect(listing.policy.group_hierarchy).toBe(true);
        expect([...listing.offered.tools].sort()).toEqual(['deep-read', 'read']);
      });

      it('allowing a branch does not allow the group above it; without the flag a dot is only a character', async () => {
        const h = await start({ app: {}, tools, script: answerAtOnce });
        await h.config.put(h.workspace, 'agent-group-policy', 'policy', { 'allowed-groups': ['knowledge.read'], 'group-hierarchy': true });
        await h.configApplied();
        const above = await h.ask({ question: 'q', group: ['knowledge'] });
        expect(above.last.error?.message).toBe('Insufficient permissions for requested tool groups: "knowledge"');
        const below = await h.ask({ question: 'q', group: ['knowledge.read.deep'] });
        expect(below.last).toMatchObject({ end_of_dialog: true, error: null });
        expect(offeredToolNames(h.prompt.reactCalls()[0]!)).toEqual(['deep-read']);

        await h.config.put(h.workspace, 'agent-group-policy', 'policy', { 'allowed-groups': ['knowledge', 'knowledge.read.deep'] });
        await h.configApplied();
        const flat = await h.ask({ question: 'q', group: ['knowledge'] });
        expect(flat.last).toMatchObject({ end_of_dialog: true, error: null });
        expect(offeredToolNames(h.prompt.reactCalls()[1]!)).toEqual(['overview']);
        const refused = await h.ask({ question: 'q', group: ['knowledge.read'] });
        expect(refused.last.error?.message).toBe('Insufficient permissions for requested tool groups: "knowledge.read"');
      });
    });

    describe('groups offered only in time windows (the policy\'s availability)', () => {
      const tools = {
        t: knowledgeQueryTool('trade', 'Trade', { group: ['trading'] }),
        r: knowledgeQueryTool('lookup', 'Research lookup', { group: ['research'] }),
      };
      const never = [{ days: [], from: '00:00', to: '24:00' }];
      const always = [{ from: '00:00', to: '24:00' }];

      it('withdraws a group outside its windows: its tools are not offered, the audit, a metric and the why-answer say so', async () => {
        const capture = capturingLogger('info');
        const h = await start({ app: {}, logger: capture.logger, tools, script: answerAtOnce });
        await h.config.put(h.workspace, 'agent-group-policy', 'policy', {
          'allowed-groups': ['research', 'trading'],
          availability: [{ groups: ['trading'], 'time-zone': 'Europe/London', windows: never }],
        });
        await h.configApplied();
        const closed = await h.ask({ question: 'q', group: ['research', 'trading'] });
        expect(closed.last).toMatchObject({ end_of_dialog: true, error: null });
        expect(offeredToolNames(h.prompt.reactCalls()[0]!)).toEqual(['lookup']);
        expect(capture.audits()[0]).toMatchObject({
          requested_groups: ['research', 'trading'],
          effective_groups: ['research'],
          withdrawn_groups: [{ group: 'trading', reason: 'time-window' }],
        });
        const text = await scrape(h.httpUrl());
        expect(sample(text, 'tg_agent_groups_withdrawn_total', { ...p, group: 'trading', reason: 'time-window' })).toBe(1);
        const why = (await (await fetch(`${h.httpUrl()}/tools/${h.workspace}?tool=trade&groups=trading`)).json()) as { why: { offered: boolean; reasons: { kind: string }[] } };
        expect(why.why).toMatchObject({ offered: false, reasons: [{ kind: 'withdrawn' }] });

        await h.config.put(h.workspace, 'agent-group-policy', 'policy', {
          'allowed-groups': ['research', 'trading'],
          availability: [{ groups: ['trading'], windows: always }],
        });
        await h.configApplied();
        await h.ask({ question: 'q', group: ['research', 'trading'] });
        expect(offeredToolNames(h.prompt.reactCalls()[1]!).sort()).toEqual(['lookup', 'trade']);
        expect(capture.audits()[1]).not.toHaveProperty('withdrawn_groups');
      });
    });

    it('withdraws a group while a service it depends on fails more often than its load rule allows', async () => {
      const capture = capturingLogger('info');
      const h = await start({
        app: {},
        logger: capture.logger,
        tools: {
          r: knowledgeQueryTool('lookup', 'Research lookup', { group: ['research'] }),
          s: knowledgeQueryTool('search', 'Search', { group: ['default'] }),
        },
        graphRag: () => ({ error: { type: 'graph-rag-error', message: 'the store is down' } }),
        // Looks up whenever it is offered the lookup: the research group's tool that calls graph RAG.
        script: (terms) =>
          (terms.history as unknown[]).length === 0 && String(terms.tool_names).includes('lookup')
            ? 'Thought: t\nAction: lookup\nArgs: {"question": "q"}'
            : 'Thought: ok\nFinal Answer: done',
      });
      await h.config.put(h.workspace, 'agent-group-policy', 'policy', {
        'allowed-groups': ['research', 'default'],
        availability: [{ groups: ['research'], load: { service: 'graph-rag', 'max-error-rate': 0.5, 'min-calls': 2 } }],
      });
      await h.configApplied();
      // Two conversations whose research lookup fails: the rule has its two calls, all failed.
      for (let i = 0; i < 2; i++) await h.ask({ question: `q${i}`, group: ['research', 'default'] });
      const reactBefore = h.prompt.reactCalls().length;
      const third = await h.ask({ question: 'q3', group: ['research', 'default'] });
      expect(third.last).toMatchObject({ end_of_dialog: true, error: null });
      expect(offeredToolNames(h.prompt.reactCalls()[reactBefore]!)).toEqual(['search']);
      expect(capture.auditsOf(third.id)[0]).toMatchObject({ withdrawn_groups: [{ group: 'research', reason: 'load' }] });
      const text = await scrape(h.httpUrl());
      // The second conversation's own second iteration already ran without it: one count per withdrawing iteration.
      const withdrawing = capture.audits().filter((a) => a.withdrawn_groups !== undefined);
      expect(withdrawing.map((a) => a.iteration)).toEqual([1, 2]);
      expect(sample(text, 'tg_agent_groups_withdrawn_total', { ...p, group: 'research', reason: 'load' })).toBe(2);
      const why = (await (await fetch(`${h.httpUrl()}/tools/${h.workspace}?tool=lookup&groups=research`)).json()) as { why: { reasons: { kind: string; message: string }[] } };
      expect(why.why.reasons).toEqual([{ kind: 'withdrawn', message: expect.stringContaining('a service it depends on is over its limits'), groups: ['research'] }]);
    });

    it('recommends, per task type, the groups and tools of the conversations that ended with an answer', async () => {
      const h = await start({
        app: {},
        tools: { r: knowledgeQueryTool('lookup', 'Research lookup', { group: ['research'] }) },
        script: (terms) =>
          (terms.history as unknown[]).length === 0 && String(terms.question).includes('look')
            ? 'Thought: t\nAction: lookup\nArgs: {"question": "q"}'
            : 'Thought: ok\nFinal Answer: done',
      });
      // Only the workspace's own task types count (and `general`, the default).
      await h.config.put(h.workspace, 'agent-task-type', 'research-questions', { description: 'Research', valid_patterns: ['react'] });
      await h.config.put(h.workspace, 'agent-task-type', 'general', { description: 'General', valid_patterns: ['react'] });
      await h.configApplied();
      // Naming its pattern, a request keeps its own task type (without one, the meta-router decides: `general`).
      await h.ask({ question: 'look it up', group: ['research', 'invented'], pattern: 'react', task_type: 'research-questions' });
      await h.ask({ question: 'just answer', group: ['research'], pattern: 'react', task_type: 'research-questions' });
      await h.ask({ question: 'hello', pattern: 'react', task_type: '' });
      // A task type the workspace does not configure is not counted: clients cannot crowd out the real ones.
      for (const made of ['made-up-1', 'made-up-2']) await h.ask({ question: 'just answer', group: ['research'], pattern: 'react', task_type: made });
      const listing = (await (await fetch(`${h.httpUrl()}/tools/${h.workspace}`)).json()) as { recommendations: unknown };
      // A group no tool is in is not counted: a client cannot grow the table with names of its own.
      expect(listing.recommendations).toEqual({
        general: { answered: 1, groups: [{ name: 'default', answered: 1 }], tools: [] },
        'research-questions': { answered: 2, groups: [{ name: 'research', answered: 2 }], tools: [{ name: 'lookup', answered: 1 }] },
      });
    });

    it('withdraws a single tool outside its window, whatever the groups: the audit, a metric, the listing and the why-answer say so', async () => {
      const capture = capturingLogger('info');
      const h = await start({
        app: {},
        logger: capture.logger,
        tools: { o: knowledgeQueryTool('place-order', 'Order', { group: ['trading'] }), q: knowledgeQueryTool('quote', 'Quote', { group: ['trading'] }) },
        script: answerAtOnce,
      });
      await h.config.put(h.workspace, 'agent-group-policy', 'policy', {
        'allowed-groups': ['trading'],
        availability: [{ tools: ['place-order'], windows: [{ days: [], from: '00:00', to: '24:00' }] }],
      });
      await h.configApplied();
      const result = await h.ask({ question: 'q', group: ['trading'] });
      expect(result.last).toMatchObject({ end_of_dialog: true, error: null });
      expect(offeredToolNames(h.prompt.reactCalls()[0]!)).toEqual(['quote']);
      expect(capture.audits()[0]).toMatchObject({ offered_tools: ['quote'], withdrawn_tools: [{ tool: 'place-order', reason: 'time-window' }] });
      expect(sample(await scrape(h.httpUrl()), 'tg_agent_tools_withdrawn_total', { ...p, tool: 'place-order', reason: 'time-window' })).toBe(1);
      const listing = (await (await fetch(`${h.httpUrl()}/tools/${h.workspace}?tool=place-order&groups=trading`)).json()) as {
        offered: { tools: string[]; withdrawn: string[] };
        why: { offered: boolean; reasons: { kind: string }[] };
      };
      expect(listing.offered).toMatchObject({ tools: ['quote'], withdrawn: ['place-order'] });
      expect(listing.why).toMatchObject({ offered: false, reasons: [{ kind: 'tool-withdrawn' }] });
    });

    it('runs a request that opted in with "+fallback" under the fallback groups when its own give it no tool', async () => {
      const capture = capturingLogger('info');
      const h = await start({
        app: {},
        logger: capture.logger,
        tools: { t: knowledgeQueryTool('trade', 'Trade', { group: ['trading'] }), g: knowledgeQueryTool('search', 'Search', { group: ['general'] }) },
        script: answerAtOnce,
      });
      await h.config.put(h.workspace, 'agent-group-policy', 'policy', {
        'allowed-groups': ['trading', 'general'],
        'fallback-groups': ['general'],
        availability: [{ groups: ['trading'], windows: [{ days: [], from: '00:00', to: '24:00' }] }],
      });
      await h.configApplied();
      const opted = await h.ask({ question: 'q', group: ['trading', '+fallback'] });
      const plain = await h.ask({ question: 'q', group: ['trading'] });
      for (const result of [opted, plain]) expect(result.last).toMatchObject({ end_of_dialog: true, error: null });
      expect(offeredToolNames(h.prompt.reactCalls()[0]!)).toEqual(['search']);
      expect(offeredToolNames(h.prompt.reactCalls()[1]!)).toEqual([]);
      expect(capture.auditsOf(opted.id)[0]).toMatchObject({ requested_groups: ['trading', '+fallback'], effective_groups: ['general'], fallback_groups: ['general'] });
      expect(capture.auditsOf(plain.id)[0]).not.toHaveProperty('fallback_groups');
      expect(sample(await scrape(h.httpUrl()), 'tg_agent_group_fallbacks_total', { ...p, group: 'general' })).toBe(1);
    });
  });
}

