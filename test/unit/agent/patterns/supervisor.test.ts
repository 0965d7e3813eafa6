/**
 * The supervisor pattern in memory (the whole agent on the in-process bus, stand-ins behind it): what the
 * broker test (test/integration/orchestrator-supervisor.test.ts) does not reach — a subagent that fails, and a
 * decomposition that names no goals. Either way the client gets exactly one final message: the synthesis.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { PromptScript, PromptTerms } from '../../../../dev/stand-ins/prompt-service.js';
import { startAgentHarness, type AgentHarness, type AgentHarnessOptions } from '../../../support/agent-harness.js';

const GOALS = ['What is a pulsar?', 'What is a quasar?'];

/** Subagents answer at once, naming their goal; the one for a quasar meets a failing model. */
const answerOrFail: PromptScript = (terms: PromptTerms) =>
  String(terms.question) === GOALS[1]
    ? { error: { type: 'llm-error', message: 'the model is overloaded' } }
    : `Thought: I know this\nFinal Answer: answer to ${String(terms.question)}`;

const synthesise: PromptScript = (terms: PromptTerms) =>
  `Synthesis: ${(terms.results as { goal: string; result: string }[]).map((r) => `${r.goal} => ${r.result}`).join(' | ')}`;

describe('supervisor pattern in memory', () => {
  let harness: AgentHarness | undefined;
  afterEach(async () => {
    await harness?.stop();
    harness = undefined;
  });

  async function start(options: Partial<AgentHarnessOptions>): Promise<AgentHarness> {
    harness = await startAgentHarness({ transport: 'memory', script: answerOrFail, ...options });
    return harness;
  }

  it("a failed subagent reports its error as its result: the client's one final message is the synthesis", async () => {
    const h = await start({ templates: { 'supervisor-decompose': () => ({ object: GOALS }), 'supervisor-synthesise': synthesise } });
    const result = await h.ask({ question: 'Pulsars and quasars', pattern: 'supervisor', session_id: 'sup-fail' }, { timeoutMs: 20_000 });
    expect(result.responses.filter((r) => r.end_of_dialog)).toHaveLength(1);
    expect(result.responses.filter((r) => r.message_type === 'error')).toEqual([]);
    expect(result.last).toMatchObject({ message_type: 'answer', message_id: 'urn:trustgraph:agent:sup-fail/synthesis' });
    expect(result.answer).toContain(`${GOALS[0]} => answer to ${GOALS[0]}`);
    expect(result.answer).toMatch(new RegExp(`${GOALS[1]!.replace('?', '\\?')} => Error: .*the model is overloaded`));
    // The failed subagent's completion carries the error; the synthesis request has both results.
    const completions = result.nextRequests.filter((r) => r.history.some((s) => s.step_type === 'subagent-completion'));
    expect(completions.map((c) => c.subagent_goal).sort()).toEqual([...GOALS].sort());
    const synthesis = result.nextRequests.filter((r) => r.history.some((s) => s.step_type === 'synthesise'));
    expect(synthesis).toHaveLength(1);
    expect(Object.keys(synthesis[0]!.history.at(-1)!.subagent_results).sort()).toEqual([...GOALS].sort());
  });

  it('a decomposition that names no goals fans out one subagent with the question itself', async () => {
    const h = await start({
      script: (terms) => `Thought: I know this\nFinal Answer: answer to ${String(terms.question)}`,
      templates: { 'supervisor-decompose': () => ({ object: 'not a list' }), 'supervisor-synthesise': synthesise },
    });
    const result = await h.ask({ question: 'One thing only', pattern: 'supervisor', session_id: 'sup-none' }, { timeoutMs: 20_000 });
    expect(result.responses.filter((r) => r.end_of_dialog)).toHaveLength(1);
    const subagents = result.nextRequests.filter((r) => r.correlation_id !== '' && r.history.length === 0);
    expect(subagents.map((r) => [r.question, r.subagent_goal, r.expected_siblings])).toEqual([['One thing only', 'One thing only', 1]]);
    expect(result.answer).toBe('Synthesis: One thing only => answer to One thing only');
  });
});
