/**
 * `tool-service`: a custom service on its own queues (docs/trustgraph-agent-notes.md §2.5). TrustGraph 2.8.2+ cannot call these
 * (its client no longer constructs); here the request goes out and replies are gathered until `end_of_stream`.
 */
import { makeToolServiceRequest, pythonJsonDumps } from '../../wire/index.js';
import type { ToolServiceTool } from '../tool.js';
import { raiseServiceError, type ToolClients } from './tool-clients.js';

export async function runToolService(
  tool: ToolServiceTool,
  args: Readonly<Record<string, unknown>>,
  clients: ToolClients,
): Promise<string> {
  const client = await clients.toolService(tool.service);
  const request = makeToolServiceRequest({
    config: pythonJsonDumps(tool.serviceConfig),
    arguments: pythonJsonDumps(args),
  });
  let text = '';
  for await (const response of client.stream(request, { isLast: (r) => r.end_of_stream || r.error !== null })) {
    raiseServiceError(`tool-service "${tool.service.key}"`, response.error);
    text += response.response;
  }
  return text;
}
