/**
 * The TrustGraph services a flow gives its tools (docs/trustgraph-agent-notes.md §1.2). A flow whose configuration does not
 * name a service's queues has no client for it; a tool that needs it then fails with a clear observation.
 */
import { CallQueueTimeoutError, type RequestClient, RequestTimeoutError } from '../../bus/index.js';
import type {
  EmbeddingsRequest,
  EmbeddingsResponse,
  GraphRagQuery,
  GraphRagResponse,
  PromptRequest,
  PromptResponse,
  RowEmbeddingsRequest,
  RowEmbeddingsResponse,
  StructuredQueryRequest,
  StructuredQueryResponse,
  ToolRequest,
  ToolResponse,
  ToolServiceRequest,
  ToolServiceResponse,
} from '../../wire/index.js';
import type { ToolServiceDescriptor } from '../tool.js';
import { ToolRunError } from '../errors.js';

export interface ToolClients {
  readonly prompt?: RequestClient<PromptRequest, PromptResponse>;
  readonly graphRag?: RequestClient<GraphRagQuery, GraphRagResponse>;
  readonly mcpTool?: RequestClient<ToolRequest, ToolResponse>;
  readonly structuredQuery?: RequestClient<StructuredQueryRequest, StructuredQueryResponse>;
  readonly embeddings?: RequestClient<EmbeddingsRequest, EmbeddingsResponse>;
  readonly rowEmbeddings?: RequestClient<RowEmbeddingsRequest, RowEmbeddingsResponse>;
  /** A started client on the descriptor's own queues (one per queue pair, created on first use). */
  toolService(descriptor: ToolServiceDescriptor): Promise<RequestClient<ToolServiceRequest, ToolServiceResponse>>;
}

/** The client, or a ToolRunError naming the queues the flow lacks. */
export function required<T>(client: T | undefined, service: string, toolType: string): T {
  if (!client) {
    throw new ToolRunError(
      `this flow has no ${service}-request/${service}-response queues, so ${toolType} tools cannot run; ` +
        `add them to the flow's processor:agent-manager topics`,
    );
  }
  return client;
}

/**
 * The error of a call to a service that may act, which is never sent twice: a call with no reply at its own
 * timeout says so, since the service may or may not have acted on it. Any other error as it is (one that timed
 * out waiting for a slot was never sent, and says so).
 */
export function notSentTwice(error: unknown, what: string): unknown {
  if (!(error instanceof RequestTimeoutError) || error instanceof CallQueueTimeoutError || error.received > 0) return error;
  return new ToolRunError(`${error.message}; not sent again: ${what} may act on a request, so it may or may not have run`, { cause: error });
}

/** Throw the service's error record, as TrustGraph's clients do. */
export function raiseServiceError(service: string, error: { type: string; message: string } | null | undefined): void {
  if (error) throw new ToolRunError(`${service} error (${error.type}): ${error.message}`);
}
