/**
 * `tool-service`: a custom service on its own queues (docs/trustgraph-agent-notes.md §2.5). TrustGraph 2.8.2+ cannot call these
 * (its client no longer constructs); here the request goes out and replies are gathered until `end_of_stream`.
 */
import { makeToolServiceRequest, pythonJsonDumps } from '../../wire/index.js';
import type { ToolServiceTool } from '../tool.js';
import { notSentTwice, raiseServiceError, type ToolClients } from './tool-clients.js';

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
  try {
    for await (const response of client.stream(request, { isLast: (r) => r.end_of_stream || r.error !== null })) {
      raiseServiceError(`tool-service "${tool.service.key}"`, response.error);
      text += response.response;
    }
  } catch (error) {
    // An idempotent service was hedged (its client sent it twice where that helped).
    throw tool.service.idempotent ? error : notSentTwice(error, `tool service "${tool.service.key}"`);
  }
  return text;
}
