/** `mcp-tool`: TrustGraph's MCP tool service, with the model's arguments as a JSON string (docs/trustgraph-agent-notes.md §2.9). */
import { pythonJsonDumps, toolRequestOf } from '../../wire/index.js';
import type { McpTool } from '../tool.js';
import { ToolRunError } from '../errors.js';
import { notSentTwice, raiseServiceError, required, type ToolClients } from './tool-clients.js';

export async function runMcpTool(
  tool: McpTool,
  args: Readonly<Record<string, unknown>>,
  clients: ToolClients,
): Promise<string> {
  const client = required(clients.mcpTool, 'mcp-tool', tool.type);
  const response = await client.request(toolRequestOf({ name: tool.mcpTool, parameters: pythonJsonDumps(args) })).catch((error: unknown) => {
    throw notSentTwice(error, 'an MCP tool');
  });
  raiseServiceError('mcp-tool', response.error);
  if (response.text) return response.text;
  try {
    return pythonJsonDumps(JSON.parse(response.object));
  } catch {
    throw new ToolRunError(`mcp-tool "${tool.mcpTool}" replied with neither text nor a JSON object`);
  }
}
