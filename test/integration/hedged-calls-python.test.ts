/**
 * Hedged calls against the services TrustGraph really runs: the prompt and MCP tool services are TrustGraph 2.11.1's
 * own Python client (dev/python-stand-ins.ts: trustgraph-base's async backend, ReceiverPool and SenderPool) on the
 * run's Pulsar, Kafka and RabbitMQ brokers, and the agent runs with its default hedging. After a few conversations
 * have taught it the prompt service's latency, the service drops one request: the conversation still ends with its
 * answer, long before the call's own 60 s timeout, the request having been sent once more. The MCP tool service
 * drops one: it is not asked again (it may act), the tool call ends with an error at its own 3 s deadline, and the
 * conversation goes on to its answer.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { mcpTool, uniqueWorkspace } from '../../dev/flow-config.js';
import { pythonBrokerUrl, startPythonStandIn, type PythonStandIn } from '../../dev/python-stand-ins.js';
import { KafkaTransport } from '../../src/bus/kafka/kafka-transport.js';
import { RabbitMqTransport } from '../../src/bus/rabbitmq/rabbitmq-transport.js';
import type { Transport } from '../../src/bus/transport.js';
import { startAgentHarness, type AgentHarness, type HarnessTransport } from '../support/agent-harness.js';
import { sample, scrape } from '../support/prometheus-text.js';
import { brokerUrls } from '../support/transport-contract.js';
import { createTestTransport, testTransports } from '../support/transports.js';

const TEXTS = {
  action: 'Thought: I should look this up\nAction: lookup\nArgs: {"query": "pulsars"}',
  final: 'Thought: I know the answer now\nFinal Answer: 42',
  observation: 'The answer is 42',
  'graph-rag': 'unused',
};
/** Conversations before the drop: each makes two prompt calls, enough for the deadline to follow the service. */
const WARM_UP = 12;
/** Without a hedge, a dropped prompt call would wait its 60 s timeout, and the ask fail first. */
const ASK_TIMEOUT_MS = 30_000;

interface Backend {
  name: string;
  transport: HarnessTransport;
  brokerUrl: string;
  connect(): Transport;
  target: Record<string, string>;
}

function backends(): Backend[] {
  const { webSocketUrl, serviceUrl } = brokerUrls();
  const pulsar = testTransports().includes('native') ? 'native' : 'websocket';
  const out: Backend[] = [
    {
      name: `Pulsar (${pulsar})`,
      transport: pulsar,
      brokerUrl: pythonBrokerUrl({ serviceUrl }, 'pulsar'),
      connect: () => createTestTransport(pulsar, { webSocketUrl, serviceUrl, logger: pino({ level: 'silent' }) }),
      target: { webSocketUrl, serviceUrl },
    },
  ];
  const kafkaBootstrapServers = inject('kafkaBootstrapServers');
  if (kafkaBootstrapServers) {
    out.push({
      name: 'Kafka',
      transport: 'kafka',
      brokerUrl: pythonBrokerUrl({ kafkaBootstrapServers }, 'kafka'),
      connect: () => new KafkaTransport({ brokers: [kafkaBootstrapServers], clientId: 'python-probe' }),
      target: { kafkaBootstrapServers },
    });
  }
  const rabbitmqUrl = inject('rabbitmqUrl');
  if (rabbitmqUrl) {
    out.push({ name: 'RabbitMQ', transport: 'rabbitmq', brokerUrl: rabbitmqUrl, connect: () => new RabbitMqTransport({ url: rabbitmqUrl }), target: { rabbitmqUrl } });
  }
  return out;
}

describe.each(backends())("hedged calls with TrustGraph's Python services on $name", (backend) => {
  const workspace = uniqueWorkspace('hedge-py');
  // Queues of their own, which only the Python services serve (the harness's stand-ins serve the flow's usual ones).
  const topics = {
    'prompt-request': `request:tg:py-prompt:${workspace}:default`,
    'prompt-response': `response:tg:py-prompt:${workspace}:default`,
    'mcp-tool-request': `request:tg:py-mcp-tool:${workspace}:default`,
    'mcp-tool-response': `response:tg:py-mcp-tool:${workspace}:default`,
  };
  let probe: Transport | undefined;
  let prompt: PythonStandIn | undefined;
  let tool: PythonStandIn | undefined;
  let h: AgentHarness;

  beforeAll(async () => {
    probe = backend.connect();
    const options = { brokerUrl: backend.brokerUrl, texts: TEXTS };
    prompt = await startPythonStandIn({ service: 'prompt', requestQueue: topics['prompt-request'], responseQueue: topics['prompt-response'] }, options);
    tool = await startPythonStandIn({ service: 'mcp-tool', requestQueue: topics['mcp-tool-request'], responseQueue: topics['mcp-tool-response'] }, options);
    await prompt.waitAnswering(probe);
    await tool.waitAnswering(probe);
    h = await startAgentHarness({
      transport: backend.transport,
      ...backend.target,
      workspace,
      flowConfig: { topics },
      tools: { lookup: mcpTool('lookup', 'lookup-server', [{ name: 'query', type: 'string', description: 'What to look up' }]) },
      settings: { requestTimeoutSeconds: 60, serviceTimeouts: { 'mcp-tool': { firstSeconds: 3 } } },
      app: {},
    });
    for (let i = 0; i < WARM_UP; i++) expect((await h.ask({ question: `warm-up ${i}` }, { timeoutMs: ASK_TIMEOUT_MS })).last.content).toBe('42');
  }, 300_000);

  afterAll(async () => {
    await h?.stop();
    await Promise.allSettled([prompt?.stop(), tool?.stop()]);
    await probe?.close();
  });

  const hedges = async (outcome: string): Promise<number | undefined> =>
    sample(await scrape(h.httpUrl()), 'tg_agent_hedged_requests_total', { processor: 'agent-manager', service: 'prompt', outcome });

  it('a prompt request the service dropped is sent once more, and the conversation ends with its answer', async () => {
    const before = await prompt!.counts();
    const hedged = (await hedges('hedge_first')) ?? 0;
    await prompt!.fault({ 'drop-next': 1 });
    const result = await h.ask({ question: 'what is a pulsar?' }, { timeoutMs: ASK_TIMEOUT_MS });
    expect(result.last).toMatchObject({ message_type: 'answer', end_of_dialog: true, content: '42' });
    expect(result.responses.filter((r) => r.end_of_dialog)).toHaveLength(1);
    // Two prompt calls, the first sent twice: three requests, one of them left unanswered.
    expect(await prompt!.counts()).toEqual({ received: before.received + 3, dropped: before.dropped + 1 });
    expect(await hedges('hedge_first')).toBe(hedged + 1);
  });

  it('an MCP tool request the service dropped is not sent again; the conversation ends with its answer after the error', async () => {
    const before = await tool!.counts();
    await tool!.fault({ 'drop-next': 1 });
    const result = await h.ask({ question: 'look it up' }, { timeoutMs: ASK_TIMEOUT_MS });
    const observation = result.responses.find((r) => r.message_type === 'observation');
    expect(observation?.content).toMatch(/^Error: no response to request \S+ on \S+py-mcp-tool\S+ within 3000 ms; not sent again: an MCP tool may act/);
    expect(result.last).toMatchObject({ message_type: 'answer', end_of_dialog: true, content: '42' });
    expect(await tool!.counts()).toEqual({ received: before.received + 1, dropped: before.dropped + 1 });
  });
});
