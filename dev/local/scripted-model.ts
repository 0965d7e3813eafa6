/**
 * The model of the local run when no LLM_URL is set: it plays the spec's §5.2 (docs/requirements.md) workflow with whatever tools
 * it is offered — Knowledge Graph Query (undefined → analysis), Complex Analysis Tool (analysis → results),
 * Reset Workflow (results → undefined) — and then answers from what it observed. It says it is scripted.
 */
interface Step {
  action: string;
  observation: string;
}

const PLAN: { tool: string; args: (question: string) => Record<string, unknown>; why: string }[] = [
  { tool: 'Knowledge Graph Query', args: (q) => ({ question: q }), why: 'I should look in the knowledge graph first' },
  { tool: 'Complex Analysis Tool', args: () => ({ dataset: 'company-x', depth: 2 }), why: 'Now I can analyse what I found' },
  { tool: 'Reset Workflow', args: () => ({}), why: 'The analysis is done; reset the workflow' },
];

export function scriptedModel(terms: Record<string, unknown>): string {
  const offered = new Set(((terms.tools as { name: string }[] | undefined) ?? []).map((t) => t.name));
  const history = (terms.history as Step[] | undefined) ?? [];
  const question = String(terms.question ?? '');
  const used = new Set(history.map((s) => s.action));
  for (const step of PLAN) {
    if (used.has(step.tool) || !offered.has(step.tool)) continue;
    return `Thought: (scripted model) ${step.why}\nAction: ${step.tool}\nArgs: ${JSON.stringify(step.args(question))}`;
  }
  const seen = history.filter((s) => !s.observation.startsWith('Error')).map((s) => `- ${s.action}: ${s.observation}`);
  const offeredNow = [...offered].join(', ') || 'none';
  return [
    `Thought: (scripted model; set LLM_URL to use a real one) No more workflow tools are offered to me now (offered: ${offeredNow}).`,
    'Final Answer: Here is what I found:',
    ...(seen.length > 0 ? seen : ['- nothing: none of the workflow tools were offered to this request\'s groups and state']),
  ].join('\n');
}

type Reply = string | { object: unknown };

/**
 * The scripted model behind the orchestrator's templates (`npm run ask -- --pattern plan-then-execute`): a plan
 * of the workflow tools it is offered, each step calling its tool, and a synthesis of the step results; for
 * `--pattern supervisor` two subagent goals and a synthesis of their answers; the meta-router's templates
 * answer `general` / `react`.
 */
export const scriptedTemplates: Record<string, (terms: Record<string, unknown>) => Reply> = {
  'task-type-classify': () => 'general',
  'pattern-select': () => 'react',
  'plan-create': (terms) => {
    const offered = new Set(((terms.tools as { name: string }[] | undefined) ?? []).map((t) => t.name));
    const first = PLAN[0]!;
    // Only the first workflow tool is offered in the starting state; the plan names it and then the next
    // ones, which the agent checks against the states the earlier steps move to.
    const steps = offered.has(first.tool) ? PLAN : [];
    return {
      object:
        steps.length > 0
          ? steps.map((s, i) => ({ goal: `${s.why} (with ${s.tool})`, tool_hint: s.tool, depends_on: i > 0 ? [i - 1] : [] }))
          : [{ goal: 'Answer directly', tool_hint: '', depends_on: [] }],
    };
  },
  'plan-step-execute': (terms) => {
    const goal = String(terms.goal ?? '');
    const step = PLAN.find((s) => goal.includes(`(with ${s.tool})`));
    return { object: step ? { tool: step.tool, arguments: step.args(goal) } : { tool: '', arguments: {} } };
  },
  'plan-synthesise': (terms) =>
    [
      '(scripted model) From the plan:',
      ...((terms.steps as { goal: string; result: string }[] | undefined) ?? []).map((s) => `- ${s.goal}: ${s.result}`),
    ].join('\n'),
  // Two subagents: one for the links, one for an analysis of the question.
  'supervisor-decompose': (terms) => {
    const question = String(terms.question ?? '');
    return { object: [`What is linked to ${question}?`, `What stands out about ${question}?`] };
  },
  'supervisor-synthesise': (terms) =>
    [
      '(scripted model) From the subagents:',
      ...((terms.results as { goal: string; result: string }[] | undefined) ?? []).map((r) => `- ${r.goal}: ${r.result}`),
    ].join('\n'),
};
