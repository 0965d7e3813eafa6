/**
 * One FlowRuntime on the in-process bus, with a prompt stand-in: a request answered on the flow's response
 * topic under its id, an undecodable one, one over the size limit, one the gate refuses, and the hooks each
 * is reported to.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryTransport } from '../../../src/bus/memory/memory-transport.js';
import { queueToTopic } from '../../../src/bus/topics.js';
import type { ProducerOptions, Properties, SubscribeOptions } from '../../../src/bus/transport.js';
import { ConcurrencyLimit } from '../../../src/flow/concurrency-limit.js';
import type { FlowDefinition } from '../../../src/config/flows.js';
import { FlowRuntime } from '../../../src/flow/flow-runtime.js';
import { ServiceCallSlots } from '../../../src/flow/service-call-slots.js';
import { RESENT_PROPERTY } from '../../../src/flow/publish-policy.js';
import { RecentRequests } from '../../../src/flow/recent-requests.js';
import { claimsTopic, RequestClaims } from '../../../src/flow/request-claims.js';
import type { FlowRuntimeDeps, RequestGate, RequestTelemetry } from '../../../src/flow/ports.js';
import { agentRequestCodec, makeAgentRequest, type AgentRequestInput, type AgentResponse } from '../../../src/wire/index.js';
import { agentFlowTopics, uniqueWorkspace } from '../../../dev/flow-config.js';
import type { PromptServiceStandIn } from '../../../dev/stand-ins/prompt-service.js';
import { waitUntil } from '../../support/agent-harness.js';
import { okPromptAndGateway, testFlowDeps } from './fixtures.js';
import { noTelemetry } from '../../../src/observability/no-telemetry.js';

const logger = pino({ level: 'silent' });

interface Running {
  bus: MemoryTransport;
  runtime: FlowRuntime;
  prompt: PromptServiceStandIn;
  /** Responses on the flow's response topic, by id property. */
  responses: Map<string, AgentResponse[]>;
  hooks: { request: unknown; calls: string[] }[];
  consumed: boolean[];
  send(payload: Buffer | string, properties?: Properties): Promise<string>;
  ask(request: AgentRequestInput): Promise<AgentResponse[]>;
}

let running: Running | undefined;
afterEach(async () => {
  await running?.runtime.stop();
  await running?.prompt.stop();
  await running?.bus.close();
  running = undefined;
});

async function start(deps: Partial<FlowRuntimeDeps> = {}, bus = new MemoryTransport()): Promise<Running> {
  const workspace = uniqueWorkspace();
  const topics = agentFlowTopics(workspace, 'default');
  const responses = new Map<string, AgentResponse[]>();
  const prompt = await okPromptAndGateway(bus, topics, (id, response) => responses.set(id, [...(responses.get(id) ?? []), response]));
  const hooks: Running['hooks'] = [];
  const consumed: boolean[] = [];
  const definition: FlowDefinition = { workspace, flow: 'default', topics, parameters: {}, fingerprint: 'f' };
  const runtime = await FlowRuntime.start(definition, {
    ...testFlowDeps(bus, logger),
    telemetry: {
      ...noTelemetry,
      request: (_flow, ask) => {
        const entry = { request: ask?.request, calls: [] as string[] };
        hooks.push(entry);
        return new Proxy({} as RequestTelemetry, { get: (_t, name) => () => void entry.calls.push(String(name)) });
      },
      consumed: (_consumer, _seconds, ok) => void consumed.push(ok),
    },
    ...deps,
  });
  const producer = await bus.createProducer(queueToTopic(topics.request!));
  const send = async (payload: Buffer | string, properties: Properties = { id: randomUUID() }): Promise<string> => {
    await producer.send({ payload: typeof payload === 'string' ? Buffer.from(payload) : payload, properties });
    return properties.id ?? 'unknown';
  };
  const finished = async (id: string): Promise<AgentResponse[]> => {
    await waitUntil(() => (responses.get(id) ?? []).some((r) => r.end_of_dialog), `the end of dialog ${id}`, 5_000);
    return responses.get(id)!;
  };
  running = {
    bus,
    runtime,
    prompt,
    responses,
    hooks,
    consumed,
    send,
    ask: async (request) => finished(await send(agentRequestCodec.encode(makeAgentRequest(request)))),
  };
  return running;
}

const finalOf = async (r: Running, id: string) => {
  await waitUntil(() => (r.responses.get(id) ?? []).some((m) => m.end_of_dialog), `the end of dialog ${id}`, 5_000);
  return r.responses.get(id)!;
};

describe('FlowRuntime', () => {
  it('answers a request on the response topic under its id, and reports the iteration and the consumed message', async () => {
    const r = await start();
    const responses = await r.ask({ question: 'q' });
    expect(responses.map((m) => m.message_type)).toEqual(['explain', 'thought', 'explain', 'answer']);
    expect(responses.at(-1)).toMatchObject({ content: 'ok', end_of_dialog: true });
    expect(r.prompt.calls).toHaveLength(1);
    await waitUntil(() => r.consumed.length === 1, 'the consumed message');
    expect(r.consumed).toEqual([true]);
    expect(r.hooks).toHaveLength(1);
    expect(r.hooks[0]!.request).toMatchObject({ question: 'q' });
    expect(r.hooks[0]!.calls).toEqual(expect.arrayContaining(['toolsOffered', 'sessionEnded', 'done']));
    expect(r.runtime.busy).toBe(0);
  });

  it.each([
    [16, 4],
    [10_000, 10],
  ])('with --concurrency %i, gives its request subscription %i consumers of 1000 where the transport caps a queue at 1000', async (concurrency, consumers) => {
    const bus = new MemoryTransport();
    Object.defineProperty(bus, 'maxReceiverQueueSize', { value: 1000 });
    const subscribed: SubscribeOptions[] = [];
    const subscribe = bus.subscribe.bind(bus);
    bus.subscribe = (options) => {
      subscribed.push(options);
      return subscribe(options);
    };
    const r = await start({ limit: new ConcurrencyLimit(concurrency) }, bus);
    const requestTopic = queueToTopic(agentFlowTopics(r.runtime.definition.workspace, 'default').request!);
    const onRequests = subscribed.filter((o) => o.topic === requestTopic);
    expect(onRequests.map((o) => o.receiverQueueSize)).toEqual(Array.from({ length: consumers }, () => 1000));
    expect(await r.ask({ question: 'q' })).toContainEqual(expect.objectContaining({ content: 'ok', end_of_dialog: true }));
  });

  it('publishes its responses and its next requests only once their subscription is back after a reconnect', async () => {
    // Which producers the flow asks to wait for a subscriber (connection-status.ts): the topics someone is known to read.
    class RecordingTransport extends MemoryTransport {
      readonly waits = new Map<string, boolean>();
      override createProducer(topic: string, options?: ProducerOptions): ReturnType<MemoryTransport['createProducer']> {
        // The test's own sender on the request topic asks for nothing: what any producer of the topic asked counts.
        this.waits.set(topic, (this.waits.get(topic) ?? false) || (options?.awaitSubscriber ?? false));
        return super.createProducer(topic, options);
      }
    }
    const bus = new RecordingTransport();
    running = await start({}, bus);
    const topics = running.runtime.definition.topics;
    expect(bus.waits.get(queueToTopic(topics.response!))).toBe(true);
    expect(bus.waits.get(queueToTopic(topics.next!))).toBe(true);
  });

  it('leaves a request sent again that another replica took, and runs one sent again that no replica claims', async () => {
    const bus = new MemoryTransport();
    const topic = claimsTopic('tg', 'agent-manager');
    const elsewhere = new RecentRequests();
    const other = new RequestClaims({ transport: bus, recent: elsewhere, topic, logger, replica: 'other' });
    const claims = new RequestClaims({ transport: bus, recent: new RecentRequests(), topic, logger, waitMs: 300, replica: 'here' });
    await other.start();
    await claims.start();
    try {
      const r = await start({ claims }, bus);
      const taken = agentRequestCodec.encode(makeAgentRequest({ question: 'taken elsewhere' }));
      const takenId = randomUUID();
      elsewhere.begin(RecentRequests.keyOf(takenId, taken));
      await r.send(taken, { id: takenId, [RESENT_PROPERTY]: 'true' });
      const loneId = await r.send(agentRequestCodec.encode(makeAgentRequest({ question: 'sent again, first copy lost' })), { id: randomUUID(), [RESENT_PROPERTY]: 'true' });
      expect(await finalOf(r, loneId)).toContainEqual(expect.objectContaining({ content: 'ok', end_of_dialog: true }));
      await waitUntil(() => r.consumed.length === 1 && r.runtime.busy === 0, 'both requests handled');
      expect(r.responses.get(takenId), 'responses to the copy another replica took').toBeUndefined();
      expect(r.prompt.calls).toHaveLength(1);
    } finally {
      await Promise.all([other.stop(), claims.stop()]);
    }
  });

  it('leaves an unmarked copy of a request that arrives while the request runs here', async () => {
    const r = await start();
    const payload = agentRequestCodec.encode(makeAgentRequest({ question: 'sent twice' }));
    const id = randomUUID();
    await r.send(payload, { id });
    await r.send(payload, { id });
    expect(await finalOf(r, id)).toContainEqual(expect.objectContaining({ content: 'ok', end_of_dialog: true }));
    await waitUntil(() => r.consumed.length === 1 && r.runtime.busy === 0, 'the request handled');
    // A second final message would have come by now: the copy is handled at once or not at all.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(r.responses.get(id)!.filter((m) => m.end_of_dialog)).toHaveLength(1);
    expect(r.prompt.calls).toHaveLength(1);
  });

  it('takes a slot of the prompt request topic for each prompt call, and gives it back', async () => {
    const callSlots = new ServiceCallSlots(1);
    const r = await start({ callSlots });
    const answers = await Promise.all([r.ask({ question: 'one' }), r.ask({ question: 'two' })]);
    expect(answers.map((a) => a.at(-1)?.content)).toEqual(['ok', 'ok']);
    const promptTopic = queueToTopic(agentFlowTopics(r.runtime.definition.workspace, 'default')['prompt-request']!);
    expect(callSlots.waiting()).toContainEqual({ service: 'prompt', topic: promptTopic, waiting: 0 });
    expect(callSlots.for('prompt', promptTopic).inFlight).toBe(0);
  });

  it('answers an undecodable request with one error response and reports it without a request', async () => {
    const r = await start();
    const id = await r.send('{"question": ');
    const responses = await finalOf(r, id);
    expect(responses).toHaveLength(1);
    expect(responses[0]).toMatchObject({ message_type: '', end_of_dialog: true, error: { type: 'agent-error' } });
    expect(responses[0]!.error?.message).toMatch(/^Cannot decode AgentRequest: invalid JSON/);
    expect(r.hooks[0]!.request).toBeUndefined();
    expect(r.hooks[0]!.calls).toEqual(expect.arrayContaining(['failed', 'done']));
    expect(r.prompt.calls).toHaveLength(0);
  });

  it('refuses a request over maxRequestBytes with an error naming the limit', async () => {
    const r = await start({ maxRequestBytes: 1_000 });
    const id = await r.send(agentRequestCodec.encode(makeAgentRequest({ question: 'x'.repeat(2_000) })));
    const responses = await finalOf(r, id);
    expect(responses).toHaveLength(1);
    expect(responses[0]!.error?.message).toMatch(/over the limit of 1000 bytes/);
    expect(r.prompt.calls).toHaveLength(0);
  });

  it('answers a refusal of the gate with its message, and reports the refusal', async () => {
    const gate: RequestGate = {
      check: (_flow, ask) =>
        ask.request.question === 'forbidden'
          ? { refusal: { kind: 'group-policy', reason: 'policy-group', message: 'Insufficient permissions for requested tool groups: "admin"' } }
          : {},
      nextProperties: () => ({}),
    };
    const r = await start({ gate });
    const responses = await r.ask({ question: 'forbidden' });
    expect(responses).toEqual([
      expect.objectContaining({ message_type: 'error', end_of_dialog: true, error: { type: 'agent-error', message: 'Insufficient permissions for requested tool groups: "admin"' } }),
    ]);
    expect(r.hooks[0]!.calls).toContain('refused');
    expect(r.prompt.calls).toHaveLength(0);
    expect((await r.ask({ question: 'allowed' })).at(-1)).toMatchObject({ content: 'ok' });
  });
});
