/**
 * The stand-ins of one flow of the harness's workspace: prompt, graph RAG, MCP tool, structured query,
 * embeddings and row embeddings services on the flow's queues, and an observer of its explainability topic.
 */
import { queueToTopic } from '../../../src/bus/topics.js';
import type { Transport } from '../../../src/bus/transport.js';
import { triplesCodec, type Triples } from '../../../src/wire/index.js';
import { startEmbeddings } from '../../../dev/stand-ins/embeddings.js';
import { startRowEmbeddings } from '../../../dev/stand-ins/row-embeddings.js';
import { startGraphRag } from '../../../dev/stand-ins/graph-rag.js';
import { startMcpTool } from '../../../dev/stand-ins/mcp-tool.js';
import { startPromptService } from '../../../dev/stand-ins/prompt-service.js';
import { startStructuredQuery } from '../../../dev/stand-ins/structured-query.js';
import { agentFlowTopics, uniqueSuffix, type AgentFlowConfigOptions } from '../../../dev/flow-config.js';
import { FINAL_ANSWER_SCRIPT, type FlowBehaviour, type FlowStandIns } from './harness-types.js';

export async function startFlowStandIns(
  transport: Transport,
  workspace: string,
  flow: string,
  behaviour: FlowBehaviour,
): Promise<FlowStandIns> {
  const topics = agentFlowTopics(workspace, flow);
  const queues = (service: string): { requestQueue: string; responseQueue: string } => ({
    requestQueue: topics[`${service}-request`] ?? '',
    responseQueue: topics[`${service}-response`] ?? '',
  });
  const stoppers: (() => Promise<void>)[] = [];
  const track = <T extends { stop(): Promise<void> }>(standIn: T): T => {
    stoppers.push(() => standIn.stop());
    return standIn;
  };
  const stopAll = async (): Promise<void> => {
    await Promise.allSettled(stoppers.splice(0).map((stop) => stop()));
  };
  try {
    const prompt = track(
      await startPromptService({
        transport,
        ...queues('prompt'),
        script: behaviour.script ?? FINAL_ANSWER_SCRIPT,
        ...(behaviour.templates ? { templates: behaviour.templates } : {}),
        ...(behaviour.promptUsage ? { usage: behaviour.promptUsage } : {}),
      }),
    );
    const graphRag = track(
      await startGraphRag({ transport, ...queues('graph-rag'), ...(behaviour.graphRag ? { answer: behaviour.graphRag } : {}) }),
    );
    const mcp = track(await startMcpTool({ transport, ...queues('mcp-tool'), tools: behaviour.mcpTools ?? {}, workspace }));
    const structuredQuery = track(await startStructuredQuery({ transport, ...queues('structured-query') }));
    const embeddings = track(await startEmbeddings({ transport, ...queues('embeddings') }));
    const rowEmbeddings = track(await startRowEmbeddings({ transport, ...queues('row-embeddings-query') }));
    const explainability: Triples[] = [];
    const explainTopic = topics.explainability;
    if (explainTopic) {
      const consumer = await transport.subscribe({
        topic: queueToTopic(explainTopic),
        subscription: `explain-observer-${uniqueSuffix(6)}`,
        subscriptionType: 'Exclusive',
        handler: async (message) => {
          await message.ack();
          try {
            explainability.push(triplesCodec.decode(message.payload));
          } catch {
            // Not ours to judge here; tests look at the decoded ones.
          }
        },
      });
      stoppers.push(() => consumer.close({ unsubscribe: true }));
    }
    return {
      workspace,
      flow,
      topics,
      prompt,
      graphRag,
      mcp,
      structuredQuery,
      embeddings,
      rowEmbeddings,
      explainability,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** The flow's `processor:agent-manager` options: without the librarian queues unless the flow has a librarian. */
export function flowConfigOptions(behaviour: FlowBehaviour, options: AgentFlowConfigOptions = {}): AgentFlowConfigOptions {
  if (behaviour.librarian) return options;
  return { ...options, topics: { 'librarian-request': undefined, 'librarian-response': undefined, ...options.topics } };
}

