/** Runs one tool of any type and returns its observation text (trimmed, as TrustGraph does). */
import type { Tool } from '../tool.js';
import { runKnowledgeQuery } from './knowledge-query.js';
import { runMcpTool } from './mcp-tool.js';
import { runPrompt } from './prompt.js';
import { runRowEmbeddingsQuery } from './row-embeddings-query.js';
import { runStructuredQuery } from './structured-query.js';
import { runTextCompletion } from './text-completion.js';
import type { SubTrace } from './sub-trace.js';
import type { ToolClients } from './tool-clients.js';
import { runToolService } from './tool-service.js';

/** `trace`: where the explain trace of the service the tool calls goes (graph RAG's; other services send none). */
export async function runTool(
  tool: Tool,
  args: Readonly<Record<string, unknown>>,
  clients: ToolClients,
  trace?: SubTrace,
): Promise<string> {
  const result = await dispatch(tool, args, clients, trace);
  return result.trim();
}

function dispatch(tool: Tool, args: Readonly<Record<string, unknown>>, clients: ToolClients, trace?: SubTrace): Promise<string> {
  switch (tool.type) {
    case 'knowledge-query':
      return runKnowledgeQuery(tool, args, clients, trace);
    case 'text-completion':
      return runTextCompletion(tool, args, clients);
    case 'mcp-tool':
      return runMcpTool(tool, args, clients);
    case 'prompt':
      return runPrompt(tool, args, clients);
    case 'structured-query':
      return runStructuredQuery(tool, args, clients);
    case 'row-embeddings-query':
      return runRowEmbeddingsQuery(tool, args, clients);
    case 'tool-service':
      return runToolService(tool, args, clients);
  }
}
