/** `knowledge-query`: a Graph RAG question on the tool's configured collection (docs/trustgraph-agent-notes.md §2.4, §3.6). */
import { makeGraphRagQuery } from '../../wire/index.js';
import type { KnowledgeQueryTool } from '../tool.js';
import type { SubTrace } from './sub-trace.js';
import { raiseServiceError, required, type ToolClients } from './tool-clients.js';

/** With `trace`, graph RAG's explain messages are handed to it (those without an id are dropped, as TrustGraph does). */
export async function runKnowledgeQuery(
  tool: KnowledgeQueryTool,
  args: Readonly<Record<string, unknown>>,
  clients: ToolClients,
  trace?: SubTrace,
): Promise<string> {
  const client = required(clients.graphRag, 'graph-rag', tool.type);
  const parent_uri = trace?.parentUri ?? '';
  const request = makeGraphRagQuery({ query: String(args.question ?? ''), collection: tool.collection, parent_uri });
  let answer = '';
  // Explain messages come first; the answer arrives in `chunk` messages until end_of_session.
  for await (const response of client.stream(request, { isLast: (r) => r.end_of_session || r.error !== null })) {
    raiseServiceError('graph-rag', response.error);
    if (response.message_type !== 'explain') answer += response.response;
    else if (trace && response.explain_id) {
      await trace.explain({ explainId: response.explain_id, explainGraph: response.explain_graph, triples: response.explain_triples });
    }
  }
  return answer;
}
