/**
 * The variables of the `agent-react` prompt (docs/trustgraph-agent-notes.md §3.2), each JSON-encoded into `PromptRequest.terms`
 * the way Python's `json.dumps` writes it.
 */
import type { ToolSet } from '../tools/index.js';
import { pythonJsonDumps, type AgentStep } from '../wire/index.js';

export const AGENT_REACT_TEMPLATE = 'agent-react';

export function agentReactTerms(
  question: string,
  toolSet: ToolSet,
  history: readonly AgentStep[],
  context: string | null = null,
): Record<string, string> {
  const tools = toolSet.promptTools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    arguments: tool.arguments.map((a) => ({
      name: a.name,
      type: a.type,
      description: a.description,
      required: a.required,
    })),
  }));
  const steps = history.map((step) => ({
    thought: step.thought,
    action: step.action,
    arguments: step.arguments,
    observation: step.observation,
  }));
  return {
    question: pythonJsonDumps(question),
    tools: pythonJsonDumps(tools),
    context: pythonJsonDumps(context),
    tool_names: pythonJsonDumps(toolSet.names.join(',')),
    history: pythonJsonDumps(steps),
  };
}
