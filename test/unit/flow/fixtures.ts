/** What the flow tests share: a flow's dependencies on the in-process bus, and a prompt stand-in with a gateway. */
import type { Logger } from 'pino';
import type { MemoryTransport } from '../../../src/bus/memory/memory-transport.js';
import { queueToTopic } from '../../../src/bus/topics.js';
import type { Transport } from '../../../src/bus/transport.js';
import { ConcurrencyLimit } from '../../../src/flow/concurrency-limit.js';
import type { FlowRuntimeDeps } from '../../../src/flow/ports.js';
import { ToolServiceClients } from '../../../src/flow/tool-service-clients.js';
import { agentResponseCodec, type AgentResponse } from '../../../src/wire/index.js';
import { knowledgeQueryTool } from '../../../dev/flow-config.js';
import { startPromptService, type PromptServiceStandIn } from '../../../dev/stand-ins/prompt-service.js';
import { registryOf } from '../../support/registry-fixtures.js';
import { noTelemetry } from '../../../src/observability/no-telemetry.js';

/** A flow's dependencies: one knowledge-query tool, 2 s service timeouts, 2 requests at once. */
export function testFlowDeps(transport: Transport, logger: Logger): FlowRuntimeDeps {
  const registry = registryOf({ lookup: knowledgeQueryTool('lookup') }).registry;
  return {
    transport,
    processorId: 'agent-manager',
    timeouts: { requestTimeoutSeconds: 2 },
    maxIterations: 5,
    strictTools: false,
    logger,
    registryFor: () => registry,
    limit: new ConcurrencyLimit(2),
    toolServices: new ToolServiceClients({ transport, processorId: 'agent-manager', timeoutMs: 2_000, logger }),
    telemetry: noTelemetry,
  };
}

/**
 * A prompt stand-in on the flow's prompt queues that answers "ok" at once, and a gateway subscription on its
 * response topic that hands each response to `onResponse` under its `id` property.
 */
export async function okPromptAndGateway(
  bus: MemoryTransport,
  topics: Record<string, string>,
  onResponse: (id: string, response: AgentResponse) => void,
): Promise<PromptServiceStandIn> {
  const prompt = await startPromptService({
    transport: bus,
    requestQueue: topics['prompt-request']!,
    responseQueue: topics['prompt-response']!,
    script: () => 'Thought: easy\nFinal Answer: ok',
  });
  await bus.subscribe({
    topic: queueToTopic(topics.response!),
    subscription: 'gateway',
    subscriptionType: 'Exclusive',
    handler: async (message) => {
      await message.ack();
      onResponse(message.properties.id ?? 'unknown', agentResponseCodec.decode(message.payload));
    },
  });
  return prompt;
}
