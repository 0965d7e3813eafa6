/**
 * One ReAct iteration (reactIteration, a failure answered by withErrorResponse as the dispatcher does) run
 * with a fake model and fake tool clients, no bus: the unit tests of the iteration and of what records its
 * events share it. Tools: `lookup` (knowledge query, group read-only, moves to
 * state analysis), `analyse` (MCP, group advanced, in state analysis, moves to results), `wipe` (MCP, group admin).
 */
import { pino } from 'pino';
import { withErrorResponse, type IterationContext, type IterationEvents } from '../../src/agent/iteration.js';
import { reactIteration } from '../../src/agent/patterns/react.js';
import type { OrchestrationContext } from '../../src/agent/orchestration-fields.js';
import { askOf } from '../../src/groups/selection.js';
import type { ToolClients } from '../../src/tools/run/tool-clients.js';
import {
  makeAgentRequest,
  makeGraphRagResponse,
  makePromptResponse,
  type AgentRequest,
  type AgentRequestInput,
  type AgentResponse,
  type GraphRagQuery,
  type GraphRagResponse,
  type PromptRequest,
  type PromptResponse,
  type ToolRequest,
  type ToolResponse,
  type Triples,
} from '../../src/wire/index.js';
import { fakeClient, type FakeAnswer } from './fake-clients.js';
import { knowledgeQueryTool, mcpTool } from '../../dev/flow-config.js';
import { registryOf } from './registry-fixtures.js';

export const TOOLS = {
  lookup: knowledgeQueryTool('lookup', 'Look things up', { group: ['read-only'], state: 'analysis' }),
  analyse: mcpTool('analyse', 'analysis-server', [
    { name: 'dataset', type: 'string', description: 'What to analyse' },
    { name: 'depth', type: 'integer', description: 'How deep', required: false },
  ], 'Analyse', { group: ['advanced'], 'applicable-states': ['analysis'], state: 'results' }),
  wipe: mcpTool('wipe', 'wipe-server', [], 'Wipe', { group: ['admin'] }),
};

/** The model's reply text: one string (non-streaming) or chunks (streaming), chosen from the request's terms. */
export type Model = (terms: Record<string, string>) => string | string[];

export interface IterationRunOptions {
  model: Model;
  /** The prompt service's replies, instead of `model`'s text (e.g. an error record). */
  prompt?: FakeAnswer<PromptRequest, PromptResponse>;
  graphRag?: FakeAnswer<GraphRagQuery, GraphRagResponse>;
  mcp?: FakeAnswer<ToolRequest, ToolResponse>;
  settings?: Partial<IterationContext['settings']>;
  /** Default: an output that records everything. */
  respond?: (response: AgentResponse) => Promise<void>;
  explain?: ((triples: Triples) => Promise<void>) | null;
  /** Receives the iteration's events besides the recording of them. */
  events?: IterationEvents;
  /** Run as the orchestrator's `react` pattern (the service always does); default: TrustGraph's ReAct agent. */
  orchestration?: OrchestrationContext;
}

function promptReplies(model: Model): FakeAnswer<PromptRequest, PromptResponse> {
  return (request) => {
    const text = model(request.terms);
    if (!Array.isArray(text)) return makePromptResponse({ text, end_of_stream: true });
    return text.map((chunk, i) => makePromptResponse({ text: chunk, end_of_stream: i === text.length - 1 }));
  };
}

/** Runs one iteration and returns what it did; every event call is recorded as `[name, ...args]`. */
export async function iterate(options: IterationRunOptions, input: AgentRequestInput) {
  const responses: AgentResponse[] = [];
  const next: AgentRequest[] = [];
  const explained: Triples[] = [];
  const events: [string, ...unknown[]][] = [];
  const recorder = new Proxy({} as IterationEvents, {
    get: (_target, name) => (...args: unknown[]) => {
      events.push([String(name), ...args]);
      const forward = (options.events as Record<string | symbol, unknown> | undefined)?.[name];
      if (typeof forward === 'function') (forward as (...a: unknown[]) => void).apply(options.events, args);
    },
  });
  const prompt = fakeClient(options.prompt ?? promptReplies(options.model));
  const graphRag = options.graphRag ? fakeClient(options.graphRag) : undefined;
  const mcpTool = options.mcp ? fakeClient(options.mcp) : undefined;
  const tools: ToolClients = {
    ...(graphRag ? { graphRag } : {}),
    ...(mcpTool ? { mcpTool } : {}),
    toolService: () => Promise.reject(new Error('no tool services in these tests')),
  };
  const explain = options.explain === undefined ? async (triples: Triples) => void explained.push(triples) : options.explain;
  const ctx: IterationContext = {
    workspace: 'default',
    flow: 'default',
    registry: registryOf(TOOLS).registry,
    prompt,
    tools,
    output: {
      respond: options.respond ?? (async (response) => void responses.push(response)),
      next: async (request) => void next.push(request),
      ...(explain ? { explain } : {}),
    },
    events: recorder,
    logger: pino({ level: 'silent' }),
    settings: { maxIterations: 5, strictTools: false, ...options.settings },
    ...(options.orchestration ? { orchestration: options.orchestration } : {}),
  };
  const ask = askOf(makeAgentRequest(input));
  const result = await withErrorResponse(ctx, ask, (started) => reactIteration(ctx, ask, started));
  const kinds = responses.map((r) => `${r.message_type}${r.end_of_dialog ? '!' : ''}`);
  const named = (name: string) => events.filter(([n]) => n === name).map(([, ...args]) => args);
  return { result, responses, kinds, next, explained, events, named, prompt, graphRag, mcpTool };
}

export const answer = (text: string): Model => () => `Thought: I know\nFinal Answer: ${text}`;
export const act = (action: string, args: string): Model => () => `Thought: use it\nAction: ${action}\nArgs: ${args}`;
export const graphAnswer = (text: string): FakeAnswer<GraphRagQuery, GraphRagResponse> => () => [
  makeGraphRagResponse({ message_type: 'explain', explain_id: 'urn:x' }),
  makeGraphRagResponse({ message_type: 'chunk', response: text, end_of_stream: true, end_of_session: true }),
];

