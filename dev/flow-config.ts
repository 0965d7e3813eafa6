/**
 * Config values as TrustGraph 2.8 writes them, for tests:
 *  - the `processor:agent-manager` entry of one (workspace, flow), as the flow service resolves the 2.8
 *    agent blueprint block (docs/trustgraph-wire-notes.md §1.12): every topic per workspace and flow, the librarian per workspace;
 *  - the gateway's `flow` record (interfaces.agent);
 *  - `tool` and `tool-service` values (JSON strings, Python `json.dumps` spelling).
 *
 * Isolation: every topic name carries the workspace, so a test that uses its own workspace
 * (`uniqueWorkspace()`, e.g. `ws-lq3k2a-9f1c20ab`) has its own topics on a shared broker.
 */
import { randomBytes } from 'node:crypto';
import { pythonJsonDumps } from '../src/wire/index.js';

/** A fresh workspace id: `<prefix>-<time36>-<random hex>`. */
export function uniqueWorkspace(prefix = 'ws'): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

/** A short random suffix for queue or subscription names. */
export function uniqueSuffix(bytes = 4): string {
  return randomBytes(bytes).toString('hex');
}

/** `agent-manager` topics of one flow (spec name → queue id), exactly as the 2.8 blueprint resolves them. */
export function agentFlowTopics(workspace: string, flow: string): Record<string, string> {
  const f = `${workspace}:${flow}`;
  return {
    request: `request:tg:agent:${f}`,
    next: `request:tg:agent:${f}`,
    response: `response:tg:agent:${f}`,
    'text-completion-request': `request:tg:text-completion:${f}`,
    'text-completion-response': `response:tg:text-completion:${f}`,
    'prompt-request': `request:tg:prompt-rag:${f}`,
    'prompt-response': `response:tg:prompt-rag:${f}`,
    'mcp-tool-request': `request:tg:mcp-tool:${f}`,
    'mcp-tool-response': `response:tg:mcp-tool:${f}`,
    'graph-rag-request': `request:tg:graph-rag:${f}`,
    'graph-rag-response': `response:tg:graph-rag:${f}`,
    'structured-query-request': `request:tg:structured-query:${f}`,
    'structured-query-response': `response:tg:structured-query:${f}`,
    'embeddings-request': `request:tg:embeddings:${f}`,
    'embeddings-response': `response:tg:embeddings:${f}`,
    'row-embeddings-query-request': `request:tg:row-embeddings:${f}`,
    'row-embeddings-query-response': `response:tg:row-embeddings:${f}`,
    explainability: `flow:tg:triples-store:${f}`,
    'librarian-request': `request:tg:librarian:${workspace}`,
    'librarian-response': `response:tg:librarian:${workspace}`,
  };
}

export interface AgentFlowConfigOptions {
  parameters?: Record<string, string>;
  /** Override or add topics (e.g. drop one by setting it to undefined). */
  topics?: Record<string, string | undefined>;
}

/** The `processor:agent-manager` value (a JSON string) for one flow. */
export function agentFlowConfig(workspace: string, flow: string, options: AgentFlowConfigOptions = {}): string {
  const topics: Record<string, string> = { ...agentFlowTopics(workspace, flow) };
  for (const [name, queue] of Object.entries(options.topics ?? {})) {
    if (queue === undefined) delete topics[name];
    else topics[name] = queue;
  }
  return pythonJsonDumps({ topics, parameters: options.parameters ?? {} });
}

/** The flow record the flow service writes under config type `flow` (the gateway reads `interfaces.agent`). */
export function flowRecordConfig(workspace: string, flow: string, blueprint = 'agent'): string {
  const topics = agentFlowTopics(workspace, flow);
  return pythonJsonDumps({
    description: `Test flow ${flow}`,
    'blueprint-name': blueprint,
    interfaces: { agent: { request: topics.request, response: topics.response } },
    parameters: {},
  });
}

/** Any `tool` config value. */
export function toolConfig(tool: Record<string, unknown>): string {
  return pythonJsonDumps(tool);
}

export interface ToolArgumentSpec {
  name: string;
  type: string;
  description: string;
  /** Default true. */
  required?: boolean;
}

export function knowledgeQueryTool(name: string, description = `Ask the knowledge graph (${name})`, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, description, type: 'knowledge-query', ...extra };
}

export function mcpTool(
  name: string,
  mcpToolId: string,
  args: ToolArgumentSpec[],
  description = `MCP tool ${name}`,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { name, description, type: 'mcp-tool', 'mcp-tool': mcpToolId, arguments: args, ...extra };
}

export function toolServiceTool(
  name: string,
  service: string,
  args: ToolArgumentSpec[],
  description = `Tool service tool ${name}`,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { name, description, type: 'tool-service', service, arguments: args, ...extra };
}

export interface ToolServiceDescriptorSpec {
  id: string;
  requestQueue: string;
  responseQueue: string;
  configParams?: (string | { name: string; required?: boolean })[];
}

/** A `tool-service` descriptor object (store it with `toolServiceConfig` or pass to the config stand-in). */
export function toolServiceDescriptor(spec: ToolServiceDescriptorSpec): Record<string, unknown> {
  return {
    id: spec.id,
    'request-queue': spec.requestQueue,
    'response-queue': spec.responseQueue,
    'config-params': spec.configParams ?? [],
  };
}

/** A `tool-service` config value (JSON string). */
export function toolServiceConfig(spec: ToolServiceDescriptorSpec): string {
  return pythonJsonDumps(toolServiceDescriptor(spec));
}

/** Full queue ids of a dynamic tool service, as TrustGraph's `dynamic_tool_service.py` names them. */
export function toolServiceQueues(topic: string): { requestQueue: string; responseQueue: string } {
  return {
    requestQueue: `non-persistent://tg/request/${topic}`,
    responseQueue: `non-persistent://tg/response/${topic}`,
  };
}
