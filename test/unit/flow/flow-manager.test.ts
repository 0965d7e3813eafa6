/**
 * FlowManager on the in-process bus: a changed flow restarts make-before-break (its subscriptions never lose
 * their last consumer, which on a real broker would drop requests and can orphan the new consumers), and a
 * changed flow whose new runtime cannot start stops its old one and is retried.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryTransport } from '../../../src/bus/memory/memory-transport.js';
import { queueToTopic } from '../../../src/bus/topics.js';
import type { Transport } from '../../../src/bus/transport.js';
import type { FlowDefinition } from '../../../src/config/flows.js';
import { FlowManager } from '../../../src/flow/flow-manager.js';
import { agentRequestCodec, makeAgentRequest, type AgentResponse } from '../../../src/wire/index.js';
import { agentFlowTopics, uniqueWorkspace } from '../../../dev/flow-config.js';
import { waitUntil } from '../../support/agent-harness.js';
import { okPromptAndGateway, testFlowDeps } from './fixtures.js';

const logger = pino({ level: process.env.LOG_LEVEL ?? 'silent' });

/** The bus, counting open consumers per subscription and refusing producers on the topics in `refused`. */
interface CountingBus {
  transport: Transport;
  /** Subscriptions whose last consumer closed, in order (name@topic). */
  emptied: string[];
  refused: Set<string>;
}

function countingBus(bus: MemoryTransport): CountingBus {
  const open = new Map<string, number>();
  const emptied: string[] = [];
  const refused = new Set<string>();
  const transport: Transport = {
    kind: bus.kind,
    createProducer: (topic) =>
      refused.has(topic) ? Promise.reject(new Error(`test refuses a producer on ${topic}`)) : bus.createProducer(topic),
    subscribe: async (options) => {
      const consumer = await bus.subscribe(options);
      const name = `${options.subscription}@${options.topic}`;
      open.set(name, (open.get(name) ?? 0) + 1);
      return {
        topic: consumer.topic,
        subscription: consumer.subscription,
        close: async (closeOptions) => {
          const left = (open.get(name) ?? 1) - 1;
          open.set(name, left);
          if (left === 0) emptied.push(name);
          await consumer.close(closeOptions);
        },
      };
    },
    status: () => bus.status(),
    onStatus: (listener) => bus.onStatus(listener),
    close: () => bus.close(),
  };
  return { transport, emptied, refused };
}

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

async function start() {
  const bus = new MemoryTransport();
  const counting = countingBus(bus);
  const workspace = uniqueWorkspace();
  const topics = agentFlowTopics(workspace, 'default');
  const finals = new Map<string, AgentResponse>();
  const prompt = await okPromptAndGateway(bus, topics, (id, response) => {
    if (response.end_of_dialog) finals.set(id, response);
  });
  const manager = new FlowManager(testFlowDeps(counting.transport, logger), logger);
  const requests = await bus.createProducer(queueToTopic(topics.request!));
  const ask = async (): Promise<AgentResponse> => {
    const id = randomUUID();
    await requests.send({ payload: agentRequestCodec.encode(makeAgentRequest({ question: 'q' })), properties: { id } });
    await waitUntil(() => finals.has(id), `the final message of ${id}`, 5_000);
    return finals.get(id)!;
  };
  /** The default flow, its explainability topic renamed by `variant` (a changed topic restarts a flow). */
  const definition = (variant: string): FlowDefinition => {
    // Without the librarian queues: nobody answers them here, and a stopping flow waits for its saves.
    const { 'librarian-request': _request, 'librarian-response': _response, ...rest } = topics;
    const changed = { ...rest, explainability: `${topics.explainability!}-${variant}` };
    return { workspace, flow: 'default', topics: changed, parameters: {}, fingerprint: variant };
  };
  cleanup = async () => {
    await manager.stopAll();
    await prompt.stop();
    await bus.close();
  };
  return { manager, counting, workspace, ask, definition };
}

describe('FlowManager', () => {
  it('restarts a changed flow make-before-break: its subscriptions never lose their last consumer', async () => {
    const { manager, counting, workspace, ask, definition } = await start();
    await manager.sync(workspace, [definition('a')]);
    expect((await ask()).content).toBe('ok');

    await manager.sync(workspace, [definition('b')]);
    expect(manager.flows().map((f) => f.fingerprint)).toEqual(['b']);
    await manager.sync(workspace, [definition('c')]);
    expect(manager.flows().map((f) => f.fingerprint)).toEqual(['c']);
    // The response subscriptions of the old runtime's service clients are their own (rr-<hex>), and go.
    expect(counting.emptied.filter((name) => !name.startsWith('rr-'))).toEqual([]);
    expect((await ask()).content).toBe('ok');

    await manager.sync(workspace, []);
    expect(manager.flows()).toEqual([]);
    expect(counting.emptied.filter((name) => !name.startsWith('rr-')).map((name) => name.split('@')[0]).sort()).toEqual([
      `agent-manager--${workspace}--default--aggregation`,
      `agent-manager--${workspace}--default--request`,
    ]);
  });

  it('stops the old runtime of a changed flow whose new one cannot start, and counts the flow as failed', async () => {
    const { manager, counting, workspace, ask, definition } = await start();
    await manager.sync(workspace, [definition('a')]);
    expect((await ask()).content).toBe('ok');

    const broken = definition('b');
    counting.refused.add(queueToTopic(broken.topics.explainability!));
    await manager.sync(workspace, [broken]);
    expect(manager.flows()).toEqual([]);
    expect(manager.failedCount).toBe(1);
    expect(counting.emptied.some((name) => name.startsWith(`agent-manager--${workspace}--default--request@`))).toBe(true);

    counting.refused.clear();
    await manager.retryFailed();
    expect(manager.flows().map((f) => f.fingerprint)).toEqual(['b']);
    expect(manager.failedCount).toBe(0);
    expect((await ask()).content).toBe('ok');
  });
});
