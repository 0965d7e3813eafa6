/**
 * A ReAct prompt of our own, rendered from the `agent-react` terms the agent sends (question, tools with
 * their arguments, history) — what TrustGraph's prompt service would render from its template. Used by the
 * local run when a real model is behind LLM_URL.
 */
export interface PromptTool {
  name: string;
  description: string | null;
  arguments: { name: string; type: string; description: string; required?: boolean }[];
}

export interface PromptStep {
  thought: string;
  action: string;
  arguments: Record<string, string>;
  observation: string;
}

export function renderReactPrompt(terms: Record<string, unknown>): string {
  const tools = (terms.tools as PromptTool[] | undefined) ?? [];
  const history = (terms.history as PromptStep[] | undefined) ?? [];
  const lines = [
    'You are a helpful assistant that answers the question by reasoning step by step and using tools.',
    '',
    'Reply with exactly one of these two forms, nothing else:',
    '',
    'Thought: <your reasoning>',
    'Action: <the exact name of one tool from the list>',
    'Args: <a JSON object with the tool\'s arguments>',
    '',
    'or, when you can answer:',
    '',
    'Thought: <your reasoning>',
    'Final Answer: <the answer>',
    '',
  ];
  if (tools.length === 0) {
    lines.push('No tools are available: answer from what you know, with Final Answer.');
  } else {
    lines.push('Available tools:');
    for (const tool of tools) {
      lines.push(`- ${tool.name}: ${tool.description ?? ''}`);
      for (const arg of tool.arguments) {
        lines.push(`    ${arg.required === false ? 'Optional' : 'Required'}: "${arg.name}" (${arg.type}) ${arg.description}`);
      }
    }
  }
  lines.push('', `Question: ${String(terms.question ?? '')}`);
  for (const step of history) {
    lines.push(`Thought: ${step.thought}`, `Action: ${step.action}`, `Args: ${JSON.stringify(step.arguments)}`, `Observation: ${step.observation}`);
  }
  return lines.join('\n');
}
