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
