/** `row-embeddings-query`: embed the query, then search a structured-data index (docs/trustgraph-agent-notes.md §2.4). */
import { makeEmbeddingsRequest, makeRowEmbeddingsRequest, type RowIndexMatch } from '../../wire/index.js';
import type { RowEmbeddingsQueryTool } from '../tool.js';
import { ToolRunError } from '../errors.js';
import { raiseServiceError, required, type ToolClients } from './tool-clients.js';

export async function runRowEmbeddingsQuery(
  tool: RowEmbeddingsQueryTool,
  args: Readonly<Record<string, unknown>>,
  clients: ToolClients,
): Promise<string> {
  const embeddings = required(clients.embeddings, 'embeddings', tool.type);
  const rows = required(clients.rowEmbeddings, 'row-embeddings-query', tool.type);
  const embedded = await embeddings.request(makeEmbeddingsRequest({ texts: [String(args.query ?? '')] }));
  raiseServiceError('embeddings', embedded.error);
  const vector = embedded.vectors[0];
  if (!vector) throw new ToolRunError('embeddings service returned no vector for the query');
  const response = await rows.request(
    makeRowEmbeddingsRequest({
      vector,
      schema_name: tool.schemaName,
      collection: tool.collection,
      limit: tool.limit,
      index_name: tool.indexName ?? null,
    }),
  );
  raiseServiceError('row-embeddings-query', response.error);
  return formatMatches(response.matches);
}

export function formatMatches(matches: readonly RowIndexMatch[]): string {
  if (matches.length === 0) return 'No matching records found';
  const lines = matches.map((m) => `- ${m.index_name}: ${m.index_value.join(', ')} (score: ${m.score.toFixed(3)})`);
  return ['Matching records:', ...lines].join('\n');
}
