/**
 * The orchestrator's patterns end to end on the real broker, with a scripted model behind the prompt
 * stand-in: plan-then-execute (plan, steps, synthesis), the meta-router choosing a pattern from the
 * `agent-pattern` / `agent-task-type` config, and the groups and states enforced on every plan step — a plan
 * naming a tool outside the request's groups, or a tool the step's state does not offer, is refused and the
 * tool is never called.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { AgentResponse } from '../../src/wire/index.js';
import type { PromptScript, PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import { startAgentHarness, type AgentHarness, type AgentHarnessOptions } from '../support/agent-harness.js';
import { sample, scrape } from '../support/prometheus-text.js';
import { loadSpecExample, WORKFLOW_GROUPS } from '../support/spec-tools.js';
import { testTransports } from '../support/transports.js';

const USAGE = { in_token: 11, out_token: 7, model: 'scripted-model' };

/** message_type and, for explain messages, the entity's last path segment(s). */
function shape(responses: readonly AgentResponse[]): string[] {
  return responses.map((r) => {
    if (r.message_type !== 'explain') return r.end_of_dialog ? `${r.message_type}(eod)` : r.message_type;
    const id = r.explain_id ?? '';
    if (/^urn:trustgraph:question:/.test(id)) return 'explain:graph-rag';
    return `explain:${id.replace(/^urn:trustgraph:agent:[^/]+\/?/, '') || 'session'}`;
  });
}

function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  const audits = () => lines.filter((l) => l.audit === 'agent-iteration').sort((a, b) => (a.iteration as number) - (b.iteration as number));
  return { logger: pino({ level: 'info' }, stream), audits };
}

/** plan-step-execute: the tool named in the goal ("... with <tool>"), arguments by tool. */
const stepExecute: PromptScript = (terms: PromptTerms) => {
  const goal = String(terms.goal);
  const tool = goal.split(' with ')[1] ?? '';
  const args: Record<string, unknown> =
    tool === 'Knowledge Graph Query' ? { question: 'Company X?' } : tool === 'Complex Analysis Tool' ? { dataset: 'company-x' } : {};
  return { object: { tool, arguments: args } };
};

const synthesise: PromptScript = (terms: PromptTerms) =>
  `Answer from ${(terms.steps as { result: string }[]).length} steps: ${(terms.steps as { result: string }[]).map((s) => s.result).join(' | ')}`;

describe.each(testTransports())('orchestrator patterns [%s]', (transportKind) => {
  let harness: AgentHarness | undefined;
  afterEach(async () => {
    await harness?.stop();
    harness = undefined;
  });

  async function start(options: Partial<AgentHarnessOptions>): Promise<AgentHarness> {
    harness = await startAgentHarness({
      transport: transportKind,
      webSocketUrl: inject('pulsarWebSocketUrl'),
      tools: loadSpecExample().tool,
      graphRag: (query) => `Company X is linked to Acme (asked: ${query})`,
      mcpTools: {
        'analysis-server': (params) => ({ object: { clusters: 2, input: params } }),
        'workflow-server': () => 'workflow reset',
        'graph-server': () => 'graph updated',
      },
      promptUsage: USAGE,
      ...options,
    });
    return harness;
  }

  it('runs plan-then-execute end to end: plan, each step in its state, synthesis, usage on the final message', async () => {
    const plan = [
      { goal: 'Find the links with Knowledge Graph Query', tool_hint: 'Knowledge Graph Query', depends_on: [] },
      { goal: 'Analyse them with Complex Analysis Tool', tool_hint: 'Complex Analysis Tool', depends_on: [0] },
    ];
    const h = await start({
      templates: { 'plan-create': () => ({ object: plan }), 'plan-step-execute': stepExecute, 'plan-synthesise': synthesise },
    });
    const result = await h.ask({
      question: 'What is Company X linked to?',
      group: WORKFLOW_GROUPS,
      state: 'undefined',
      pattern: 'plan-then-execute',
      session_id: 'plan-session-1',
      conversation_id: 'conv-1',
    });

    expect(shape(result.responses)).toEqual([
      'explain:pattern-decision',
      'explain:session',
      'thought',
      'explain:plan',
      'thought',
      // The knowledge query's graph RAG trace, handed on as TrustGraph's orchestrator does.
      'explain:graph-rag',
      'observation',
      'explain:step/0',
      'thought',
      'observation',
      'explain:step/1',
      'thought',
      'explain:synthesis',
      'answer(eod)',
    ]);
    expect(result.responses[2]!.content).toBe('Created plan with 2 steps');
    expect(result.responses[4]!.content).toBe('Step 0: Find the links with Knowledge Graph Query → calling Knowledge Graph Query');
    expect(result.last.message_id).toBe('urn:trustgraph:agent:plan-session-1/synthesis');
    expect(result.answer).toMatch(/^Answer from 2 steps: Company X is linked to Acme \(asked: Company X\?\) \| /);
    // Only the synthesis call ran in the last iteration: its usage is the final message's.
    expect([result.last.in_token, result.last.out_token, result.last.model]).toEqual([11, 7, 'scripted-model']);

    // The state moves after each successful step: undefined → analysis → results.
    expect(result.nextRequests.map((r) => r.state)).toEqual(['undefined', 'analysis', 'results']);
    for (const next of result.nextRequests) {
      expect(next.pattern).toBe('plan-then-execute');
      expect(next.conversation_id).toBe('conv-1');
      expect(next.session_id).toBe('plan-session-1');
    }
    expect(result.nextRequests.map((r) => r.history.at(-1)!.step_type)).toEqual(['plan', 'execute', 'execute']);
    expect(result.nextRequests[2]!.history.at(-1)!.plan.map((s) => s.status)).toEqual(['completed', 'completed']);
    // Each step's tool ran once; the second step saw the first one's result.
    expect(h.graphRag.bus.calls).toHaveLength(1);
    expect(h.mcp.bus.calls.map((r) => r.name)).toEqual(['analysis-server']);
    const second = h.prompt.calls.filter((c) => c.id === 'plan-step-execute')[1]!;
    expect(second.terms.previous_results).toEqual([{ index: 0, result: 'Company X is linked to Acme (asked: Company X?)' }]);
    // The second step was offered the tools of the state `analysis`.
    expect((second.terms.tools as { name: string }[]).map((t) => t.name)).toContain('Complex Analysis Tool');
  });

  it('refuses a plan naming a tool outside the groups, plans again, and never calls that tool', async () => {
    const { logger, audits } = capturingLogger();
    const bad = [{ goal: 'Reset with Reset Workflow', tool_hint: 'Reset Workflow', depends_on: [] }];
    const good = [{ goal: 'Look it up with Knowledge Graph Query', tool_hint: 'Knowledge Graph Query', depends_on: [] }];
    const h = await start({
      logger,
      app: {},
      templates: {
        'plan-create': (terms) => ({ object: terms.feedback ? good : bad }),
        'plan-step-execute': stepExecute,
        'plan-synthesise': synthesise,
      },
    });
    const result = await h.ask({ question: 'Company X?', group: ['read-only'], state: 'undefined', pattern: 'plan-then-execute', session_id: 's-groups' });
    expect(result.last.message_type).toBe('answer');

    const plans = h.prompt.calls.filter((c) => c.id === 'plan-create');
    expect(plans).toHaveLength(2);
    // The model was shown only the tools of its groups, and told why its first plan was refused.
    expect((plans[0]!.terms.tools as { name: string }[]).map((t) => t.name)).toEqual(['Knowledge Graph Query', 'Text Completion']);
    expect(String(plans[1]!.terms.feedback)).toContain('"Reset Workflow", which is not in this conversation\'s groups');
    expect(h.mcp.bus.calls.filter((r) => r.name === 'workflow-server')).toEqual([]);
    expect(result.nextRequests[0]!.history[0]!.arguments).toEqual({ replan: '1' });
    // The client was told, as a ReAct refusal tells it, before the plan that ran.
    const refusal = result.responses.find((r) => r.message_type === 'observation' && r.content.startsWith('Plan refused'));
    expect(refusal).toMatchObject({
      content: 'Plan refused: step 0 names the tool "Reset Workflow", which is not in this conversation\'s groups; making a new plan',
      message_id: 'urn:trustgraph:agent:s-groups/plan/refusal/0',
    });
    expect(result.responses.indexOf(refusal!)).toBeLessThan(result.responses.findIndex((r) => r.content === 'Created plan with 1 steps'));
    // And an explain entity for it, as a refused ReAct action has its observation.
    const refusalEntity = result.responses.find((r) => r.message_type === 'explain' && r.explain_id === refusal!.message_id);
    const said = Object.fromEntries(refusalEntity!.explain_triples.map((t) => [t.p?.iri, t.o?.iri || t.o?.value]));
    expect(said).toMatchObject({
      'http://www.w3.org/2000/01/rdf-schema#label': 'Plan refused',
      'https://trustgraph.ai/ns/refusal': refusal!.content,
      'http://www.w3.org/ns/prov#wasDerivedFrom': 'urn:trustgraph:agent:s-groups/pattern-decision',
    });

    const text = await scrape(h.httpUrl());
    const p = { processor: 'agent-manager' };
    expect(sample(text, 'tg_agent_plan_steps_refused_total', { ...p, tool: 'Reset Workflow', at: 'plan' })).toBe(1);
    expect(sample(text, 'tg_agent_replans_total', p)).toBe(1);
    expect(sample(text, 'tg_agent_pattern_total', { ...p, pattern: 'plan-then-execute', routed: 'false' })).toBe(1);
    await h.waitFor(() => audits().length >= 3, 'three audit lines (plan, step, synthesis)');
    const first = audits()[0]!;
    expect(first.pattern).toBe('plan-then-execute');
    expect(first.plan).toEqual({ steps: 1, replan: 1 });
    expect(first.denials).toEqual([expect.objectContaining({ kind: 'plan-step-refused', tool: 'Reset Workflow', reason: 'plan' })]);
  });

  it("refuses a step whose tool the step's state does not offer, before it runs", async () => {
    // No tool hint, so the plan passes; the model then picks a tool of the state `analysis` while in `undefined`.
    const plan = [{ goal: 'Analyse with Complex Analysis Tool', tool_hint: '', depends_on: [] }];
    const h = await start({
      templates: { 'plan-create': () => ({ object: plan }), 'plan-step-execute': stepExecute, 'plan-synthesise': synthesise },
    });
    await h.config.put(h.workspace, 'agent-pattern', 'plan-then-execute', { name: 'plan-then-execute', description: 'Plan', max_replan_depth: 0 });
    await h.configApplied();
    const result = await h.ask({ question: 'Analyse', group: WORKFLOW_GROUPS, state: 'undefined', pattern: 'plan-then-execute', session_id: 's-state' });

    expect(h.mcp.bus.calls).toEqual([]);
    const observation = result.responses.find((r) => r.message_type === 'observation')!;
    expect(observation.content).toContain('the tool "Complex Analysis Tool" is not available in this conversation\'s groups and the state "undefined"');
    // The state did not move; the step failed; with no re-plans left the synthesis saw the refusal.
    expect(result.nextRequests.map((r) => r.state)).toEqual(['undefined', 'undefined']);
    expect(result.nextRequests[1]!.history.at(-1)!.plan[0]!.status).toBe('failed');
    expect(result.answer).toContain('was refused');
    expect(h.prompt.calls.filter((c) => c.id === 'plan-create')).toHaveLength(1);
  });

  it('refuses a plan step whose tool is not offered in the state that step would run in', async () => {
    // Step 0 would run in `undefined`, where Complex Analysis Tool is not offered (it needs `analysis`).
    const bad = [{ goal: 'Analyse with Complex Analysis Tool', tool_hint: 'Complex Analysis Tool', depends_on: [] }];
    const good = [
      { goal: 'Find with Knowledge Graph Query', tool_hint: 'Knowledge Graph Query', depends_on: [] },
      { goal: 'Analyse with Complex Analysis Tool', tool_hint: 'Complex Analysis Tool', depends_on: [0] },
    ];
    const h = await start({
      templates: {
        'plan-create': (terms) => ({ object: terms.feedback ? good : bad }),
        'plan-step-execute': stepExecute,
        'plan-synthesise': synthesise,
      },
    });
    const result = await h.ask({ question: 'Analyse', group: WORKFLOW_GROUPS, state: 'undefined', pattern: 'plan-then-execute', session_id: 's-plan-state' });
    const plans = h.prompt.calls.filter((c) => c.id === 'plan-create');
    expect(String(plans[1]!.terms.feedback)).toContain('not available in the state "undefined" that step would run in');
    // plan-create was shown the tool, with the state it needs: exactly what the plan check accepts.
    const shown = (plans[0]!.terms.tools as { name: string; description: string }[]).find((t) => t.name === 'Complex Analysis Tool');
    expect(shown?.description).toMatch(/ \(only once an earlier step has moved the state to "analysis"\)$/);
    // The second plan runs in order; the analysis ran once, in `analysis`.
    expect(h.mcp.bus.calls.map((r) => r.name)).toEqual(['analysis-server']);
    expect(result.nextRequests.map((r) => r.state)).toEqual(['undefined', 'analysis', 'results']);
  });

  it("gives the model the workspace's additional-context (config type agent, or --config-type's) before the framing", async () => {
    const echo = (terms: Record<string, unknown>): string => `Thought: context ${JSON.stringify(terms.context)}\nFinal Answer: ok`;
    const h = await start({ script: echo });
    const ask = async (framing?: string): Promise<string | undefined> =>
      (await h.ask({ question: 'q', group: WORKFLOW_GROUPS, state: 'undefined', ...(framing ? { framing, pattern: 'react' } : {}) })).responses.find(
        (r) => r.message_type === 'thought',
      )?.content;
    expect(await ask()).toBe('context null');
    await h.config.put(h.workspace, 'agent', 'additional-context', 'Answer in French.');
    await h.configApplied();
    expect(await ask()).toBe('context "Answer in French."');
    expect(await ask('Be brief.')).toBe('context "Answer in French.\\n\\nBe brief."');
    await h.config.delete(h.workspace, 'agent', 'additional-context');
    await h.configApplied();
    expect(await ask('Be brief.')).toBe('context "Be brief."');
    await h.stop();

    // --config-type names the type it is read from; `agent` is then not read.
    const other = await start({ script: echo, settings: { configType: 'tg-agent-context' } });
    await other.config.putMany(other.workspace, [
      { type: 'tg-agent-context', key: 'additional-context', value: 'From the other type.' },
      { type: 'agent', key: 'additional-context', value: 'Not this one.' },
    ]);
    await other.configApplied();
    const answer = await other.ask({ question: 'q', group: WORKFLOW_GROUPS, state: 'undefined' });
    expect(answer.responses.find((r) => r.message_type === 'thought')?.content).toBe('context "From the other type."');
  });

  it('routes by the meta-router: task type, then pattern, framing in the context, usage of every call summed', async () => {
    const h = await start({
      script: (terms) => `Thought: framed by ${JSON.stringify(terms.context)}\nFinal Answer: direct`,
      templates: {
        'task-type-classify': (terms) => (String(terms.question).includes('research') ? 'research' : 'General'),
        'pattern-select': (terms) => (terms.task_type === 'research' ? '"plan-then-execute"' : 'react'),
        'plan-create': () => ({ object: [{ goal: 'Look with Knowledge Graph Query', tool_hint: 'Knowledge Graph Query', depends_on: [] }] }),
        'plan-step-execute': stepExecute,
        'plan-synthesise': synthesise,
      },
    });
    await h.config.putMany(h.workspace, [
      { type: 'agent-pattern', key: 'react', value: { name: 'react', description: 'Reason and act' } },
      { type: 'agent-pattern', key: 'plan-then-execute', value: { name: 'plan-then-execute', description: 'Plan first' } },
      { type: 'agent-pattern', key: 'supervisor', value: { name: 'supervisor', description: 'Fan out' } },
      { type: 'agent-task-type', key: 'general', value: { name: 'general', description: 'General', valid_patterns: ['react', 'plan-then-execute'], framing: 'Be brief.' } },
      { type: 'agent-task-type', key: 'research', value: { name: 'research', description: 'Research', valid_patterns: ['react', 'plan-then-execute'], framing: 'Cite.' } },
    ]);
    await h.configApplied();

    const react = await h.ask({ question: 'hello', group: WORKFLOW_GROUPS, state: 'undefined', session_id: 's-route-1' });
    expect(shape(react.responses)).toEqual(['explain:pattern-decision', 'explain:session', 'thought', 'explain:final', 'answer(eod)']);
    const decision = react.responses[0]!.explain_triples.map((t) => [t.p?.iri, t.o?.value ?? t.o?.iri]);
    expect(decision).toContainEqual(['https://trustgraph.ai/ns/pattern', 'react']);
    expect(decision).toContainEqual(['https://trustgraph.ai/ns/taskType', 'general']);
    expect(react.responses[2]!.content).toBe('framed by "Be brief."');
    // task-type-classify, pattern-select and agent-react: three calls in this one iteration.
    expect([react.last.in_token, react.last.out_token, react.last.model]).toEqual([33, 21, 'scripted-model']);

    const planned = await h.ask({ question: 'research this', group: WORKFLOW_GROUPS, state: 'undefined', session_id: 's-route-2' });
    expect(planned.nextRequests[0]!.pattern).toBe('plan-then-execute');
    expect(planned.nextRequests[0]!.task_type).toBe('research');
    expect(planned.nextRequests[0]!.framing).toBe('Cite.');
    expect(shape(planned.responses).at(-1)).toBe('answer(eod)');
    expect(h.prompt.calls.filter((c) => c.id === 'plan-create')[0]!.terms.framing).toBe('Cite.');
    // The pattern decision is made once per conversation: later iterations do not route again.
    expect(h.prompt.calls.filter((c) => c.id === 'task-type-classify')).toHaveLength(2);
  });

  it('falls back to react / general when the model names nothing known', async () => {
    const h = await start({
      templates: { 'task-type-classify': () => 'astrology', 'pattern-select': () => 'nonsense' },
    });
    await h.config.putMany(h.workspace, [
      { type: 'agent-task-type', key: 'general', value: { name: 'general', description: 'General', valid_patterns: ['react', 'plan-then-execute'] } },
      { type: 'agent-task-type', key: 'research', value: { name: 'research', description: 'Research' } },
    ]);
    await h.configApplied();
    const result = await h.ask({ question: 'q', session_id: 's-fallback' });
    expect(result.last.message_type).toBe('answer');
    const decision = result.responses[0]!.explain_triples.map((t) => [t.p?.iri, t.o?.value ?? t.o?.iri]);
    expect(decision).toContainEqual(['https://trustgraph.ai/ns/pattern', 'react']);
    expect(decision).toContainEqual(['https://trustgraph.ai/ns/taskType', 'general']);
  });
});
