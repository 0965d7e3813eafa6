/**
 * The three-tool flow: one tool for each kind of service the agent calls over the bus — a knowledge query
 * (graph-rag), an MCP tool and a tool service — with stand-ins that answer them, and a model that uses the
 * tool its question names (`@use <tool>`) once, then answers with the observation; other questions are
 * answered at once with "ok".
 */
import type { PromptReply, PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import type { AgentHarnessOptions } from './agent-harness.js';
import { knowledgeQueryTool, mcpTool, toolServiceTool } from '../../dev/flow-config.js';

export const DIRECT_ANSWER = 'Thought: I can answer directly\nFinal Answer: ok';

/** The question that makes the model call `tool` (kq, weather or jokes). */
export const useTool = (tool: string): string => `@use ${tool}`;

export function useToolScript(terms: PromptTerms): PromptReply {
  const history = terms.history as { observation: string }[];
  const tool = /^@use (\S+)$/.exec(String(terms.question))?.[1];
  if (!tool) return DIRECT_ANSWER;
  if (history.length > 0) return `Thought: done\nFinal Answer: ${history[0]?.observation ?? ''}`;
  return `Thought: I will use ${tool}\nAction: ${tool}\nArgs: {"question": "q", "city": "Paris", "topic": "cats"}`;
}

/** Harness options of the three-tool flow; add `settings` and the like on top. */
export const THREE_TOOLS = {
  script: useToolScript,
  tools: {
    kq: knowledgeQueryTool('kq'),
    weather: mcpTool('weather', 'weather-mcp', [{ name: 'city', type: 'string', description: 'City' }]),
    jokes: toolServiceTool('jokes', 'joke-service', [{ name: 'topic', type: 'string', description: 'Topic' }]),
  },
  toolServices: { 'joke-service': { handler: (args) => `a joke about ${String(args.topic)}` } },
  mcpTools: { 'weather-mcp': (params) => `sunny in ${String((params as { city?: unknown }).city)}` },
  graphRag: () => 'graph answer',
} satisfies Partial<AgentHarnessOptions>;
