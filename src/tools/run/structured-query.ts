/** `structured-query`: a natural-language question over structured data (docs/trustgraph-agent-notes.md §2.4, §3.6). */
import { makeStructuredQueryRequest, pythonJsonDumps } from '../../wire/index.js';
import type { StructuredQueryTool } from '../tool.js';
import { raiseServiceError, required, type ToolClients } from './tool-clients.js';

export async function runStructuredQuery(
  tool: StructuredQueryTool,
  args: Readonly<Record<string, unknown>>,
  clients: ToolClients,
): Promise<string> {
  const client = required(clients.structuredQuery, 'structured-query', tool.type);
  const response = await client.request(
    makeStructuredQueryRequest({ question: String(args.question ?? ''), collection: tool.collection }),
  );
  raiseServiceError('structured-query', response.error);
  if (!response.data) return 'No data returned';
  // TrustGraph JSON-encodes the (already JSON) data string once more; kept for identical observations.
  return pythonJsonDumps(response.data);
}
