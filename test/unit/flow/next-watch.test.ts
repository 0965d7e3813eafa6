/**
 * `next` requests on the bus (`--next-on-bus`) watched by the replica that published them: one the broker
 * acknowledged and dropped runs on that replica, and its conversation ends once; one another replica took is
 * asked about once and not run twice; one this replica took itself asks nobody. Replicas are FlowRuntimes on the
 * in-process bus, with their request claims on it; the broker's drop is a request-topic producer whose send
 * resolves without delivering.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryTransport } from '../../../src/bus/memory/memory-transport.js';
import { queueToTopic } from '../../../src/bus/topics.js';
import type { FlowDefinition } from '../../../src/config/flows.js';
import { FlowRuntime } from '../../../src/flow/flow-runtime.js';
import type { NextEvent } from '../../../src/flow/ports.js';
import { RecentRequests } from '../../../src/flow/recent-requests.js';
import { claimsTopic, RequestClaims } from '../../../src/flow/request-claims.js';
import { agentRequestCodec, agentResponseCodec, makeAgentRequest, type AgentResponse } from '../../../src/wire/index.js';
import { agentFlowTopics, uniqueWorkspace } from '../../../dev/flow-config.js';
import { startGraphRag } from '../../../dev/stand-ins/graph-rag.js';
import { startPromptService } from '../../../dev/stand-ins/prompt-service.js';
import { noTelemetry } from '../../../src/observability/no-telemetry.js';
import { waitUntil } from '../../support/agent-harness.js';
import { capturingLogger } from '../../support/log-capture.js';
import { testFlowDeps } from './fixtures.js';

const WATCH_MS = 200;
const CLAIM_WAIT_MS = 400;
/** Longer than a watched next can take to be asked about and settled. */
const SETTLED_MS = WATCH_MS + CLAIM_WAIT_MS + 600;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Replica {
  runtime: FlowRuntime;
  claims: RequestClaims;
  nexts: NextEvent[];
}

interface World {
  bus: MemoryTransport;
  definition: FlowDefinition;
  replicas: Replica[];
  responses: Map<string, AgentResponse[]>;
  asks: string[];
  promptCalls(): number;
  /** Decides, for each `next` a replica sends, whether the broker drops it after acknowledging it. */
  drop: (payload: Buffer, id: string) => boolean;
  send(question: string): Promise<string>;
  stop(): Promise<void>;
}

let world: World | undefined;
afterEach(async () => {
  await world?.stop();
  world = undefined;
});

/**
 * A flow with a one-tool conversation of two iterations (a graph RAG lookup, then the answer), and `replicas` agents
 * on it; `retainsMessages`: the bus keeps what it acknowledged, as Kafka and RabbitMQ do.
 */
async function start(replicas: number, logger = pino({ level: 'silent' }), retainsMessages = false): Promise<World> {
  const bus = new MemoryTransport();
  if (retainsMessages) Object.defineProperty(bus, 'retainsMessages', { value: true });
  const workspace = uniqueWorkspace();
  const topics = agentFlowTopics(workspace, 'default');
  const definition: FlowDefinition = { workspace, flow: 'default', topics, parameters: {}, fingerprint: 'f' };
  const prompt = await startPromptService({
    transport: bus,
    requestQueue: topics['prompt-request']!,
    responseQueue: topics['prompt-response']!,
    script: (terms) =>
      (terms.history as unknown[]).length === 0 ? 'Thought: look it up\nAction: lookup\nAction Input: {"question": "what?"}' : 'Thought: done\nFinal Answer: found',
  });
  const graphRag = await startGraphRag({ transport: bus, requestQueue: topics['graph-rag-request']!, responseQueue: topics['graph-rag-response']! });
  const responses = new Map<string, AgentResponse[]>();
  await bus.subscribe({
    topic: queueToTopic(topics.response!),
    subscription: 'gateway',
    subscriptionType: 'Exclusive',
    handler: async (message) => {
      await message.ack();
      const id = message.properties.id ?? 'unknown';
      responses.set(id, [...(responses.get(id) ?? []), agentResponseCodec.decode(message.payload)]);
    },
  });
  const claimsOn = claimsTopic('tg', 'agent-manager');
  const asks: string[] = [];
  await bus.subscribe({
    topic: claimsOn,
    subscription: 'observer',
    subscriptionType: 'Exclusive',
    handler: async (message) => {
      await message.ack();
      const claim = JSON.parse(message.payload.toString('utf8')) as { ask?: string };
      if (claim.ask !== undefined) asks.push(claim.ask);
    },
  });
  const requestTopic = queueToTopic(topics.request!);
  const w: World = {
    bus,
    definition,
    replicas: [],
    responses,
    asks,
    promptCalls: () => prompt.calls.length,
    drop: () => false,
    send: async () => '',
    stop: async () => {
      await Promise.all(w.replicas.map((r) => r.runtime.stop()));
      await Promise.all(w.replicas.map((r) => r.claims.stop()));
      await Promise.all([prompt.stop(), graphRag.stop()]);
      await bus.close();
    },
  };
  // The broker's drop: a next the agents publish on the request topic is acknowledged and, when `drop` says so, not delivered.
  const createProducer = bus.createProducer.bind(bus);
  bus.createProducer = async (topic, options) => {
    const producer = await createProducer(topic, options);
    if (topic !== requestTopic) return producer;
    return {
      ...producer,
      topic: producer.topic,
      send: async (message) => {
        const isNext = agentRequestCodec.decode(message.payload).history.length > 0;
        if (isNext && w.drop(message.payload, message.properties?.id ?? '')) return;
        await producer.send(message);
      },
    };
  };
  for (let i = 0; i < replicas; i++) {
    const recent = new RecentRequests();
    const claims = new RequestClaims({ transport: bus, recent, topic: claimsOn, logger, waitMs: CLAIM_WAIT_MS, replica: `replica-${i}` });
    await claims.start();
    const nexts: NextEvent[] = [];
    const runtime = await FlowRuntime.start(definition, {
      ...testFlowDeps(bus, logger),
      telemetry: { ...noTelemetry, next: (event) => void nexts.push(event) },
      nextOnBus: true,
      nextWatchMs: WATCH_MS,
      recent,
      claims,
    });
    w.replicas.push({ runtime, claims, nexts });
  }
  const gateway = await bus.createProducer(requestTopic);
  w.send = async (question) => {
    const id = randomUUID();
    await gateway.send({ payload: agentRequestCodec.encode(makeAgentRequest({ question })), properties: { id } });
    return id;
  };
  world = w;
  return w;
}

const finals = (w: World, id: string): AgentResponse[] => (w.responses.get(id) ?? []).filter((r) => r.end_of_dialog);
const events = (w: World, event: NextEvent): number => w.replicas.reduce((n, r) => n + r.nexts.filter((e) => e === event).length, 0);

describe('a next request watched until a replica is known to have taken it', () => {
  it('runs a next the broker dropped on the replica that published it: its conversation ends once, with its answer, and a late copy is left', async () => {
    const capture = capturingLogger();
    const w = await start(1, capture.logger);
    const dropped: { payload: Buffer; id: string }[] = [];
    w.drop = (payload, id) => dropped.push({ payload, id }) === 1;
    const id = await w.send('dropped next');
    await waitUntil(() => finals(w, id).length > 0, 'the end of the conversation', 5_000);
    expect(finals(w, id)).toEqual([expect.objectContaining({ message_type: 'answer', content: 'found' })]);
    expect(events(w, 'recovered')).toBe(1);
    expect(capture.lines.filter((l) => l.level === 40 && l.id === id && String(l.msg).includes('reached no replica'))).toHaveLength(1);
    // The dropped next delivered after all, unmarked, as a broker that held it would: left, not run a second time.
    const producer = await w.bus.createProducer(queueToTopic(w.definition.topics.request!));
    await producer.send({ payload: dropped[0]!.payload, properties: { id } });
    await sleep(SETTLED_MS);
    expect(finals(w, id)).toHaveLength(1);
    expect(w.promptCalls()).toBe(2);
  });

  it('does not run a next another replica took: asks once, the replica that runs it answers, the conversation ends once', async () => {
    const w = await start(2);
    const id = await w.send('taken elsewhere');
    await waitUntil(() => finals(w, id).length > 0, 'the end of the conversation', 5_000);
    await sleep(SETTLED_MS);
    expect(finals(w, id)).toEqual([expect.objectContaining({ message_type: 'answer', content: 'found' })]);
    expect(w.promptCalls()).toBe(2);
    expect(events(w, 'received')).toBe(1);
    expect(events(w, 'recovered')).toBe(0);
    // Round robin: the request went to one replica, its next to the other, which the first asked about once.
    expect(w.asks).toHaveLength(1);
  });

  it('asks nobody about a next the replica that published it received', async () => {
    const w = await start(1);
    const ids = await Promise.all(['one', 'two', 'three'].map((q) => w.send(q)));
    await waitUntil(() => ids.every((id) => finals(w, id).length > 0), 'the end of the conversations', 5_000);
    await sleep(SETTLED_MS);
    expect(ids.map((id) => finals(w, id).length)).toEqual([1, 1, 1]);
    expect(events(w, 'received')).toBe(3);
    expect(w.asks).toEqual([]);
    expect(events(w, 'recovered')).toBe(0);
  });

  it('a replica that stops with a next of its own dropped runs it before it has stopped', async () => {
    const w = await start(1);
    let stopping: Promise<void> | undefined;
    w.drop = () => {
      // The iteration that published it is still running: the stop waits for it, then for the watch.
      stopping ??= w.replicas[0]!.runtime.stop();
      return true;
    };
    const id = await w.send('stopped with a dropped next');
    await waitUntil(() => stopping !== undefined, 'the next request', 5_000);
    await stopping;
    expect(finals(w, id)).toEqual([expect.objectContaining({ message_type: 'answer', content: 'found' })]);
    expect(events(w, 'recovered')).toBe(1);
  });

  it('watches nothing where the bus keeps what it acknowledged (Kafka, RabbitMQ): a next is never run on a guess there', async () => {
    const w = await start(1, pino({ level: 'silent' }), true);
    w.drop = () => true;
    const id = await w.send('kept by the broker');
    await waitUntil(() => events(w, 'published') === 1, 'the next request', 5_000);
    await sleep(SETTLED_MS);
    expect(finals(w, id)).toEqual([]);
    expect(w.asks).toEqual([]);
    expect(events(w, 'recovered')).toBe(0);
  });
});
