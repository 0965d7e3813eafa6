/**
 * TrustGraph's services the agent calls through a flow's `<service>-request` and `<service>-response` queues,
 * by TrustGraph's names: what the flow runtime makes clients for, what `tg_downstream_*` metrics label, and
 * what a group policy's load rule may watch.
 */
export const FLOW_SERVICES = ['prompt', 'graph-rag', 'mcp-tool', 'structured-query', 'embeddings', 'row-embeddings-query', 'librarian'] as const;
export type FlowService = (typeof FLOW_SERVICES)[number];

export const isFlowService = (name: string): name is FlowService => (FLOW_SERVICES as readonly string[]).includes(name);
