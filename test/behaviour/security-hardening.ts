/**
 * What an attack on a real broker found (one `describe` per finding), end to end through the whole app
 * (src/app.ts) on any harness transport: the HTTP surface, signatures that bind the whole iteration, initial
 * states, a policy that applies even when the tools of the same change are broken, undeclared arguments, and
 * odd config keys.
 */
import { describe, expect, it } from 'vitest';
import { IterationSigner, SIGNATURE_PROPERTY, SIGNED_AT_PROPERTY } from '../../src/security/iteration-signature.js';
import type { PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import { AskTimeoutError, type AgentHarnessOptions } from '../support/agent-harness.js';
import { responsesToRefused } from '../support/no-reply.js';
import { harnessPerTest, onTarget, type HarnessTarget } from '../support/harness-per-test.js';
import { capturingLogger } from '../support/log-capture.js';
import { knowledgeQueryTool, mcpTool, toolServiceTool } from '../../dev/flow-config.js';
import { parseExposition, sample, scrape } from '../support/prometheus-text.js';
import { noTelemetry } from '../../src/observability/no-telemetry.js';

const SIGNING_KEY = 'test-signing-key-0123456789';
const p = { processor: 'agent-manager' };
const history = (terms: PromptTerms) => terms.history as unknown[];

export function securityHardeningSuite(target: HarnessTarget): void {
  describe(onTarget('security hardening', target), () => {
    const start = harnessPerTest(target);

    describe('1. the HTTP surface', () => {
      const SECRET = 'sk-LIVE-0123456789abcdefghij';

      it('never serves a config-param value, and answers a malformed URL with 400 logged at debug only', async () => {
        const capture = capturingLogger('info');
        const h = await start({
          app: {},
          logger: capture.logger,
          toolServices: { weather: { configParams: ['api-key', 'region'] } },
          tools: {
            w: toolServiceTool('weather', 'weather', [{ name: 'city', type: 'string', description: 'City' }], 'Weather', {
              'api-key': SECRET,
              region: 'eu',
            }),
          },
        });
        const base = h.httpUrl();
        const bodies: string[] = [];
        for (const path of ['/tools', `/tools/${h.workspace}`, `/tools/${h.workspace}?groups=default&state=undefined`, '/metrics', '/readyz']) {
          const response = await fetch(`${base}${path}`);
          expect(response.status, path).toBe(200);
          bodies.push(await response.text());
        }
        for (const body of bodies) expect(body).not.toContain(SECRET);
        const listing = JSON.parse(bodies[1]!) as { tools: { name: string; settings: unknown; config?: unknown }[] };
        const weather = listing.tools.find((t) => t.name === 'weather')!;
        expect(weather.settings).toEqual({
          service: 'weather',
          configParams: [
            { name: 'api-key', type: 'string' },
            { name: 'region', type: 'string' },
          ],
        });
        expect(weather).not.toHaveProperty('config');

        // The tool still gets its config when it runs: only the listing hides it.
        h.prompt.script = (terms) =>
          history(terms).length === 0 ? 'Thought: t\nAction: weather\nArgs: {"city": "Oslo"}' : 'Thought: ok\nFinal Answer: done';
        await h.ask({ question: 'weather?' });
        expect(h.toolServices.weather!.calls.map((c) => c.config)).toEqual([{ 'api-key': SECRET, region: 'eu' }]);

        const errorsBefore = capture.lines.filter((l) => (l.level as number) >= 50).length;
        for (let i = 0; i < 5; i++) {
          const bad = await fetch(`${base}/tools/%E0%A4%A`);
          expect(bad.status).toBe(400);
          expect(await bad.text()).toMatch(/malformed percent-encoding/);
        }
        expect(capture.lines.filter((l) => (l.level as number) >= 50)).toHaveLength(errorsBefore);
      });

      it('requires the bearer token for the listing only', async () => {
        const h = await start({ app: { httpToken: 'listing-token-0123456789' }, tools: { a: knowledgeQueryTool('lookup') } });
        const base = h.httpUrl();
        expect((await fetch(`${base}/tools`)).status).toBe(401);
        expect((await fetch(`${base}/tools/${h.workspace}`, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
        const listed = await fetch(`${base}/tools/${h.workspace}`, { headers: { authorization: 'Bearer listing-token-0123456789' } });
        expect(listed.status).toBe(200);
        expect(((await listed.json()) as { workspace: string }).workspace).toBe(h.workspace);
        for (const path of ['/metrics', '/healthz', '/readyz']) expect((await fetch(`${base}${path}`)).status, path).toBe(200);
      });
    });

    describe('2. signatures bind the whole iteration', () => {
      async function signedConversation(extra: Partial<AgentHarnessOptions> = {}) {
        const capture = capturingLogger();
        const h = await start({
          app: { signingKey: SIGNING_KEY },
          logger: capture.logger,
          tools: {
            a: knowledgeQueryTool('lookup', 'Look up', { group: ['read-only'], state: 'analysis' }),
            b: knowledgeQueryTool('report', 'Results only', { group: ['read-only'], 'applicable-states': ['results'] }),
          },
          script: (terms) =>
            history(terms).length === 0 ? 'Thought: look\nAction: lookup\nArgs: {"question": "q"}' : 'Thought: ok\nFinal Answer: done',
          ...extra,
        });
        const result = await h.ask({ question: 'q', group: ['read-only'], collection: 'c1', session_id: 's-1' });
        expect(result.nextMessages).toHaveLength(1);
        return { h, genuine: result.nextMessages[0]!, capture };
      }

      it('refuses a signed next whose question, collection, streaming, session id or flow was changed', async () => {
        const { h, genuine, capture } = await signedConversation();
        const reactCalls = h.prompt.reactCalls().length;
        const properties = genuine.properties;
        // Refused without a reply: the id may be a victim's, whose dialog an error would end.
        for (const [field, changed] of [
          ['question', { ...genuine.value, question: 'delete everything' }],
          ['collection', { ...genuine.value, collection: 'other' }],
          ['streaming', { ...genuine.value, streaming: true }],
          ['session_id', { ...genuine.value, session_id: 's-2' }],
        ] as const) {
          expect(await responsesToRefused(h, capture.audits, changed, properties), field).toEqual([]);
        }
        await h.addFlow('other');
        await h.configApplied();
        await h.waitReady();
        const moved = await h.ask(genuine.value, { properties, flow: 'other', timeoutMs: 3_000 }).catch((e: unknown) => e);
        expect(moved).toBeInstanceOf(AskTimeoutError);
        expect((moved as AskTimeoutError).responses).toEqual([]);
        await h.waitFor(() => capture.audits().filter((a) => a.outcome === 'refused').length === 5, 'five refusals audited');
        expect(h.prompt.reactCalls()).toHaveLength(reactCalls);

        const text = await scrape(h.httpUrl());
        expect(sample(text, 'tg_agent_privilege_escalation_attempts_total', { ...p, reason: 'bad-signature' })).toBe(5);
        expect(sample(text, 'tg_agent_requests_refused_total', { ...p, reason: 'bad-signature' })).toBe(5);
      });

      it('continues a signed conversation whose model wrote odd Args keys (__proto__, constructor, unicode): no false escalation', async () => {
        const capture = capturingLogger();
        const odd = '{"__proto__": {"polluted": 1}, "constructor": "c", "prototype": [1], "ключ 🔑": "v", "": null}';
        const seen: unknown[] = [];
        const h = await start({
          app: { signingKey: SIGNING_KEY },
          logger: capture.logger,
          tools: { o: mcpTool('odd', 'odd-srv', []) },
          mcpTools: {
            'odd-srv': (parameters) => {
              seen.push(parameters);
              return 'ok';
            },
          },
          script: (terms) => (history(terms).length === 0 ? `Thought: call\nAction: odd\nArgs: ${odd}` : 'Thought: ok\nFinal Answer: done'),
        });
        const result = await h.ask({ question: 'q', session_id: 'odd-args' });
        expect(result.last).toMatchObject({ message_type: 'answer', content: 'done', end_of_dialog: true });
        // The next iteration saw the arguments exactly as the model wrote them, and its signature verified.
        const args = result.nextRequests[0]!.history[0]!.arguments;
        expect(Object.keys(args).sort()).toEqual(['', '__proto__', 'constructor', 'prototype', 'ключ 🔑'].sort());
        expect(Object.getPrototypeOf(args)).toBe(Object.prototype);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        expect(seen).toHaveLength(1);
        const text = await scrape(h.httpUrl());
        for (const reason of ['bad-signature', 'missing-signature', 'replayed-signature', 'stale-signature']) {
          expect(sample(text, 'tg_agent_privilege_escalation_attempts_total', { ...p, reason }), reason).toBe(0);
        }
      });

      it('refuses a replayed next and a stale one, counts and audits each by reason', async () => {
        const { h, genuine, capture } = await signedConversation();
        const reactCalls = h.prompt.reactCalls().length;

        // A replay gets no reply (the dialog it names is someone else's); a stale one does: it is genuine, only late.
        expect(await responsesToRefused(h, capture.audits, genuine.value, genuine.properties)).toEqual([]);
        expect(capture.lines.some((l) => /already processed \(a replay\)/.test(String(l.msg)))).toBe(true);

        // Signed with the key an hour ago: older than the default --signing-max-age (600 s).
        const hourAgo = new IterationSigner(SIGNING_KEY, { now: () => Date.now() - 3_600_000 });
        const id = 'stale-iteration';
        const old = hourAgo.sign({ workspace: h.workspace, flow: h.flow, id }, genuine.value);
        const stale = await h.ask(genuine.value, { properties: { ...old, id } });
        expect(stale.last.error?.message).toMatch(/older than the accepted age/);
        // A fresh signature of the same content by the key holder is accepted (the age is what was refused).
        const fresh = new IterationSigner(SIGNING_KEY).sign({ workspace: h.workspace, flow: h.flow, id: 'fresh-iteration' }, genuine.value);
        const accepted = await h.ask(genuine.value, { properties: { ...fresh, id: 'fresh-iteration' } });
        expect(accepted.last).toMatchObject({ message_type: 'answer', end_of_dialog: true });
        expect(h.prompt.reactCalls()).toHaveLength(reactCalls + 1);

        const text = await scrape(h.httpUrl());
        for (const reason of ['replayed-signature', 'stale-signature']) {
          expect(sample(text, 'tg_agent_requests_refused_total', { ...p, reason }), reason).toBe(1);
          expect(sample(text, 'tg_agent_privilege_escalation_attempts_total', { ...p, reason }), reason).toBe(1);
        }
        const refusedAudits = capture.audits().filter((a) => a.outcome === 'refused');
        expect(refusedAudits.map((a) => (a.denials as { reason: string }[])[0]?.reason)).toEqual(['replayed-signature', 'stale-signature']);
        expect(genuine.properties[SIGNED_AT_PROPERTY]).toMatch(/^\d+$/);
        expect(genuine.properties[SIGNATURE_PROPERTY]).toMatch(/^[A-Za-z0-9_-]{43}$/);
      });

      it('refuses a first request in a state the policy does not allow to start in, counted and audited', async () => {
        const capture = capturingLogger();
        const h = await start({
          app: { signingKey: SIGNING_KEY },
          logger: capture.logger,
          tools: { b: knowledgeQueryTool('report', 'Results only', { 'applicable-states': ['results'] }) },
          script: (terms) =>
            history(terms).length === 0 ? 'Thought: skip\nAction: report\nArgs: {"question": "q"}' : 'Thought: ok\nFinal Answer: done',
        });
        await h.config.put(h.workspace, 'agent-group-policy', 'policy', { 'allowed-groups': ['default'], 'initial-states': ['undefined'] });
        await h.configApplied();

        const skipped = await h.ask({ question: 'q', state: 'results' });
        expect(skipped.last).toMatchObject({ message_type: 'error', end_of_dialog: true });
        expect(skipped.last.error?.message).toBe('Conversation refused: it may not start in state "results"; allowed initial states: "undefined"');
        expect(h.prompt.calls).toHaveLength(0);
        expect(h.graphRag.calls).toHaveLength(0);

        const allowed = await h.ask({ question: 'q' });
        expect(allowed.last).toMatchObject({ end_of_dialog: true });
        expect(allowed.last.error).toBeFalsy();

        const text = await scrape(h.httpUrl());
        expect(sample(text, 'tg_agent_privilege_escalation_attempts_total', { ...p, reason: 'initial-state' })).toBe(1);
        expect(sample(text, 'tg_agent_requests_refused_total', { ...p, reason: 'initial-state' })).toBe(1);
        const audit = capture.audits().find((a) => a.outcome === 'refused');
        expect(audit?.denials).toEqual([expect.objectContaining({ kind: 'initial-state', reason: 'initial-state' })]);
        const listing = (await (await fetch(`${h.httpUrl()}/tools/${h.workspace}`)).json()) as { policy: unknown };
        expect(listing.policy).toEqual({ allowed_groups: ['default'], allow_wildcard: false, initial_states: ['undefined'], unknown_groups: 'warn', allowed_patterns: 'configured', group_hierarchy: false, availability: [] });
      });
    });

    describe('3. the policy always applies', () => {
      it('applies a tightened policy in the same change as a tool nested 200 000 levels deep', async () => {
        const h = await start({ app: {}, tools: { a: knowledgeQueryTool('lookup', 'Look up', { group: ['read-only', 'admin'] }) } });
        expect((await h.ask({ question: 'q', group: ['admin'] })).last.error).toBeFalsy();

        const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
        await h.config.putMany(h.workspace, [
          { type: 'tool', key: 'deep', value: `{"type": "knowledge-query", "name": "deep", "description": "d", "extra": ${deep}}` },
          { type: 'agent-group-policy', key: 'policy', value: { 'allowed-groups': ['read-only'] } },
        ]);
        await h.configApplied(30_000);

        const refused = await h.ask({ question: 'q', group: ['admin'] });
        expect(refused.last.error?.message).toBe('Insufficient permissions for requested tool groups: "admin"');
        expect((await h.ask({ question: 'q', group: ['read-only'] })).last.error).toBeFalsy();
      });

      it('applies every other part of a change when the tool registry fails, reports the failure, and clears it once it applies', async () => {
        const seen: string[] = [];
        const h = await start({
          tools: { a: knowledgeQueryTool('lookup') },
          hooks: {
            extraConfigTypes: ['agent-group-policy'],
            onConfig: (change) => {
              if (change.changedTypes.includes('agent-group-policy')) seen.push(JSON.stringify(change.snapshot['agent-group-policy']));
            },
            telemetry: {
              ...noTelemetry,
              registryRebuilt: (registry) => {
                if (registry.get('boom')) throw new Error('registry hook exploded');
              },
            },
          },
        });
        await h.config.putMany(h.workspace, [
          { type: 'tool', key: 'boom', value: knowledgeQueryTool('boom') },
          { type: 'agent-group-policy', key: 'policy', value: { 'allowed-groups': ['x'] } },
        ]);
        await h.configApplied();
        expect(seen.at(-1)).toContain('allowed-groups');
        expect(h.service.failuresOfConfig(h.workspace)).toEqual([
          expect.objectContaining({ part: 'tools', message: 'registry hook exploded', version: h.config.version }),
        ]);
        // A flow added while the tools stay broken still starts.
        await h.addFlow('second');
        await h.configApplied();
        await h.waitFor(() => h.service.runningFlows().some((f) => f.flow === 'second'), 'the second flow to start');
        await h.deleteTool('boom');
        await h.configApplied();
        expect(h.service.failuresOfConfig(h.workspace)).toEqual([]);
      });
    });

    describe('4. undeclared arguments', () => {
      const tools = {
        fs: mcpTool('files', 'files-server', [{ name: 'path', type: 'string', description: 'A path' }]),
      };
      const script = (terms: PromptTerms) =>
        history(terms).length === 0
          ? 'Thought: list\nAction: files\nArgs: {"path": "/tmp", "rm -rf": "/"}'
          : 'Thought: ok\nFinal Answer: done';

      it('never reach the MCP server by default; each is audited and counted', async () => {
        const capture = capturingLogger();
        const h = await start({ app: {}, logger: capture.logger, tools, script, mcpTools: { 'files-server': () => 'listed' } });
        const result = await h.ask({ question: 'q' });
        expect(result.last).toMatchObject({ message_type: 'answer', end_of_dialog: true });
        expect(h.mcp.calls.map((c) => c.parameters)).toEqual([{ path: '/tmp' }]);
        const text = await scrape(h.httpUrl());
        expect(sample(text, 'tg_agent_undeclared_arguments_total', { ...p, tool: 'files', action: 'dropped' })).toBe(1);
        const audit = capture.audits().find((a) => (a.undeclared_arguments as unknown[]).length > 0);
        expect(audit).toMatchObject({ undeclared_arguments: [{ tool: 'files', argument: 'rm -rf', action: 'dropped' }], undeclared_arguments_count: 1 });
      });

      it('refuse the call under --undeclared-arguments reject, and pass under pass', async () => {
        const h = await start({ app: { undeclaredArguments: 'reject' }, tools, script, mcpTools: { 'files-server': () => 'listed' } });
        const rejected = await h.ask({ question: 'q' });
        expect(h.mcp.calls).toHaveLength(0);
        expect(rejected.responses.find((r) => r.message_type === 'observation')?.content).toMatch(/argument "rm -rf" is not declared by the tool/);

        const passing = await start({ app: { undeclaredArguments: 'pass' }, tools, script, mcpTools: { 'files-server': () => 'listed' } });
        await passing.ask({ question: 'q' });
        expect(passing.mcp.calls.map((c) => c.parameters)).toEqual([{ path: '/tmp', 'rm -rf': '/' }]);
      });
    });

    describe('5. odd config keys and leftover series', () => {
      it('reports a policy stored under another key (failing closed), and loads a tool keyed "__proto__"', async () => {
        const h = await start({ app: {}, tools: Object.fromEntries([['__proto__', knowledgeQueryTool('proto-tool')]]) as Record<string, object> });
        await h.config.put(h.workspace, 'agent-group-policy', 'policies', { 'allowed-groups': ['default'] });
        await h.configApplied();

        const refused = await h.ask({ question: 'q' });
        expect(refused.last.error?.message).toMatch(/Insufficient permissions/);
        const listing = (await (await fetch(`${h.httpUrl()}/tools/${h.workspace}`)).json()) as {
          policy_problems: string[];
          tools: { key: string; name: string }[];
        };
        expect(listing.policy_problems).toEqual([expect.stringMatching(/config key "policies" is not read/)]);
        expect(listing.tools.map((t) => [t.key, t.name])).toEqual([['__proto__', 'proto-tool']]);
        const text = await scrape(h.httpUrl());
        expect(sample(text, 'tg_agent_policy_problems', { ...p, workspace: h.workspace })).toBe(1);
      });

      it('removes the metric series of groups and tools that are deleted', async () => {
        const groups = Array.from({ length: 50 }, (_, i) => `gone-group-${i}`);
        const h = await start({ app: {}, tools: { a: knowledgeQueryTool('lookup'), b: knowledgeQueryTool('doomed-tool', 'd', { group: groups }) } });
        const naming = (text: string, label: string, value: string) =>
          parseExposition(text).filter((s) => s.labels[label] === value).length;
        const before = await scrape(h.httpUrl());
        expect(naming(before, 'group', 'gone-group-7')).toBeGreaterThan(0);
        expect(naming(before, 'tool', 'doomed-tool')).toBeGreaterThan(0);

        await h.deleteTool('b');
        await h.configApplied();
        const after = await scrape(h.httpUrl());
        for (const group of groups) expect(naming(after, 'group', group), group).toBe(0);
        expect(naming(after, 'tool', 'doomed-tool')).toBe(0);
        expect(naming(after, 'tool', 'lookup')).toBeGreaterThan(0);
      });
    });

    describe('6. the patterns a client may run', () => {
      const templates = {
        'supervisor-decompose': () => ({ object: ['one goal'] }),
        'supervisor-synthesise': () => 'synthesised',
      };
      const answer = () => 'Thought: known\nFinal Answer: done';

      it('refuses a pattern the workspace does not configure by default, before the model is called, counted and audited', async () => {
        const capture = capturingLogger();
        const h = await start({ app: {}, logger: capture.logger, script: answer, templates });
        await h.config.put(h.workspace, 'agent-pattern', 'react', { name: 'react', description: 'Reason and act' });
        await h.configApplied();

        const refused = await h.ask({ question: 'q', pattern: 'supervisor' });
        expect(refused.responses).toHaveLength(1);
        expect(refused.last).toMatchObject({ message_type: 'error', end_of_dialog: true });
        expect(refused.last.error?.message).toBe(
          `Pattern "supervisor" is not allowed in workspace "${h.workspace}": a request may name "react", from the workspace's agent-pattern ` +
            'entries (the group policy\'s allowed-patterns: "configured"); send no pattern to let the meta-router choose',
        );
        expect(h.prompt.calls).toHaveLength(0);
        for (const pattern of ['react', '']) expect((await h.ask({ question: 'q', pattern })).last).toMatchObject({ message_type: 'answer', end_of_dialog: true });
        expect(h.prompt.calls.filter((c) => c.id.startsWith('supervisor'))).toHaveLength(0);

        const text = await scrape(h.httpUrl());
        expect(sample(text, 'tg_agent_requests_refused_total', { ...p, reason: 'pattern' })).toBe(1);
        expect(sample(text, 'tg_agent_privilege_escalation_attempts_total', { ...p, reason: 'initial-state' })).toBe(0);
        const audit = capture.audits().find((a) => a.outcome === 'refused');
        expect(audit?.denials).toEqual([expect.objectContaining({ kind: 'pattern', reason: 'pattern' })]);
      });

      it('runs what the policy allows: "any" is TrustGraph\'s behaviour, a list holds clients to exactly it', async () => {
        const h = await start({ app: {}, script: answer, templates });
        await h.config.put(h.workspace, 'agent-pattern', 'react', { name: 'react', description: 'Reason and act' });
        await h.config.put(h.workspace, 'agent-group-policy', 'policy', { 'allowed-groups': ['default'], 'allowed-patterns': 'any' });
        await h.configApplied();
        const any = await h.ask({ question: 'q', pattern: 'supervisor' }, { timeoutMs: 30_000 });
        expect(any.last).toMatchObject({ message_type: 'answer', content: 'synthesised', end_of_dialog: true });

        await h.config.put(h.workspace, 'agent-group-policy', 'policy', { 'allowed-groups': ['default'], 'allowed-patterns': ['plan-then-execute'] });
        await h.configApplied();
        const listed = await h.ask({ question: 'q', pattern: 'supervisor' });
        expect(listed.last.error?.message).toMatch(/^Pattern "supervisor" is not allowed in workspace "[^"]+": a request may name "plan-then-execute", from the group policy's allowed-patterns;/);
        const listing = (await (await fetch(`${h.httpUrl()}/tools/${h.workspace}`)).json()) as { policy: { allowed_patterns: unknown } };
        expect(listing.policy.allowed_patterns).toEqual(['plan-then-execute']);
      });
    });
  });
}
