/**
 * The fan-in across replicas on the in-process bus: two consumers of one Key_Shared aggregation subscription
 * (two replicas), fan-outs whose completions arrive while one replica leaves. Every fan-out is synthesised once,
 * by whichever replica owns its key at the end; what the leaving replica held is rebuilt by the next owner.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fanInMessage } from '../../../src/agent/orchestrator/fan-in-messages.js';
import { MemoryTransport } from '../../../src/bus/memory/memory-transport.js';
import { ConnectionStatus } from '../../../src/bus/connection-status.js';
import type { Consumer, IncomingMessage, Producer, StatusListener, SubscribeOptions, Transport } from '../../../src/bus/transport.js';
import { FanInConsumer } from '../../../src/flow/fan-in-consumer.js';
import type { AggregationOutcome } from '../../../src/flow/ports.js';
import type { FlowOutput } from '../../../src/flow/iteration-output.js';
import { PublishPolicy } from '../../../src/flow/publish-policy.js';
import { agentRequestCodec, agentResponseCodec, makeAgentRequest, makeAgentStep, type AgentRequest, type AgentResponse } from '../../../src/wire/index.js';
import { noTelemetry } from '../../../src/observability/no-telemetry.js';

const AGGREGATION = 'persistent://tg/request/agent:default:default-aggregation';
const NEXT = 'persistent://tg/request/agent:default:default';
const RESPONSE = 'persistent://tg/response/agent:default:default';
const logger = pino({ level: 'silent' });

function template(correlationId: string, expected: number): AgentRequest {
  return makeAgentRequest({ question: `parent of ${correlationId}`, group: ['read-only'], session_id: `parent-${correlationId}`, pattern: 'supervisor', correlation_id: correlationId, expected_siblings: expected });
}

function completion(correlationId: string, goal: string, answer = `answer ${goal}`): AgentRequest {
  return makeAgentRequest({
    question: goal,
    correlation_id: correlationId,
    subagent_goal: goal,
    session_id: `sub-${correlationId}-${goal}`,
    history: [makeAgentStep({ thought: 'Subagent completed', action: 'complete', observation: answer, step_type: 'subagent-completion' })],
  });
}

/** Count the messages a replica's consumers take. */
function counting(transport: Transport): { transport: Transport; taken: () => number } {
  let taken = 0;
  const wrapped = new Proxy(transport, {
    get(target, property) {
      if (property === 'subscribe') {
        return (options: SubscribeOptions) =>
          target.subscribe({
            ...options,
            handler: (message: IncomingMessage) => {
              taken++;
              return options.handler(message);
            },
          });
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { transport: wrapped, taken: () => taken };
}

/** A replica's own view of the bus: its consumers, and a connection status the test breaks (the bus stays up). */
function ownView(bus: MemoryTransport): { transport: Transport; status: ConnectionStatus; consumers: Consumer[] } {
  const consumers: Consumer[] = [];
  const status = new ConnectionStatus();
  const transport = new Proxy(bus, {
    get(target, property) {
      if (property === 'subscribe') return async (options: SubscribeOptions) => { const c = await target.subscribe(options); consumers.push(c); return c; };
      if (property === 'status') return () => status.get();
      if (property === 'onStatus') return (listener: StatusListener) => status.on(listener);
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { transport, status, consumers };
}

describe('FanInConsumer on a Key_Shared subscription shared by two replicas', () => {
  let bus: MemoryTransport;
  beforeEach(() => {
    bus = new MemoryTransport();
  });
  afterEach(async () => {
    vi.useRealTimers();
    await bus.close();
  });

  /** How each fan-in ended, as the metrics count it, across replicas. */
  let outcomes: AggregationOutcome[] = [];
  beforeEach(() => {
    outcomes = [];
  });

  async function replica(transport: Transport, timeoutMs = 60_000, maxPayloadBytes?: number): Promise<FanInConsumer> {
    const producer = (topic: string): Promise<Producer> => bus.createProducer(topic);
    const output: FlowOutput = {
      definition: { workspace: 'default', flow: 'default', topics: {}, parameters: {}, fingerprint: 'f' },
      // The budget a real transport gives (the in-process bus has none).
      transport: maxPayloadBytes === undefined ? bus : Object.assign(Object.create(bus) as MemoryTransport, { maxPayloadBytes: () => maxPayloadBytes }),
      logger,
      producers: { response: await producer(RESPONSE), next: await producer(NEXT), aggregation: await producer(AGGREGATION) },
      publisher: new PublishPolicy(bus, 1_000, logger),
      telemetry: noTelemetry,
    };
    const consumer = new FanInConsumer(output, { topic: AGGREGATION, subscription: 'agent-manager--default--default--aggregation', timeoutMs }, { ...noTelemetry, aggregationEnded: (outcome) => void outcomes.push(outcome) });
    await consumer.start(transport);
    return consumer;
  }

  async function observe(topic: string): Promise<IncomingMessage[]> {
    const seen: IncomingMessage[] = [];
    await bus.subscribe({ topic, subscription: `observer-${topic}`, subscriptionType: 'Exclusive', handler: async (m) => { seen.push(m); await m.ack(); } });
    return seen;
  }

  /** The one response the client got: an error that ends the dialog of `id`. */
  function onlyError(responses: IncomingMessage[], id: string): AgentResponse {
    expect(responses.map((m) => m.properties.id)).toEqual([id]);
    const error = agentResponseCodec.decode(responses[0]!.payload);
    expect(error).toMatchObject({ message_type: 'error', end_of_dialog: true });
    return error;
  }

  const settle = async (): Promise<void> => {
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  };

  /** On a fake clock (timers and Date; the bus's deliveries are turns of the event loop and stay real). */
  const fakeClock = (): void => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  };

  /** Move the fake clock on in 20 ms steps, delivering what each step releases, until `done` or `limitMs`. */
  const advanceUntil = async (done: () => boolean, limitMs: number): Promise<void> => {
    for (let passed = 0; !done() && passed < limitMs; passed += 20) {
      await vi.advanceTimersByTimeAsync(20);
      await settle();
    }
  };

  it('synthesises every fan-out once although the owner of some of them left halfway', async () => {
    const next = await observe(NEXT);
    const responses = await observe(RESPONSE);
    const a = counting(bus);
    const first = await replica(a.transport);
    const second = await replica(bus);
    const aggregation = await bus.createProducer(AGGREGATION);
    const ids = Array.from({ length: 10 }, (_, i) => `corr-${i}`);
    for (const id of ids) await aggregation.send(fanInMessage('fan-out', template(id, 2), { id: `client-${id}` }, Date.now()));
    for (const id of ids) await aggregation.send(fanInMessage('completion', completion(id, 'g1'), { id: `client-${id}` }, Date.now()));
    // A duplicate completion is ignored wherever it lands.
    await aggregation.send(fanInMessage('completion', completion('corr-0', 'g1'), { id: 'client-corr-0' }, Date.now()));
    await settle();
    const heldByFirst = a.taken();
    expect(heldByFirst).toBeGreaterThan(0);
    expect(heldByFirst).toBeLessThan(21);
    expect(next).toEqual([]);

    await first.close();
    for (const id of ids) await aggregation.send(fanInMessage('completion', completion(id, 'g2'), { id: `client-${id}` }, Date.now()));
    await settle();

    const synthesis = next.map((m) => ({ id: m.properties.id, request: agentRequestCodec.decode(m.payload) }));
    expect(synthesis.map((s) => s.id).sort()).toEqual(ids.map((id) => `client-${id}`).sort());
    for (const { id, request } of synthesis) {
      const correlation = id!.replace('client-', '');
      expect(request).toMatchObject({ pattern: 'supervisor', session_id: `parent-${correlation}`, correlation_id: '', group: ['read-only'] });
      expect(request.history.at(-1)!.subagent_results).toEqual({ g1: 'answer g1', g2: 'answer g2' });
    }
    // Two findings per fan-out, on the client's response stream, and nothing else.
    const findings: AgentResponse[] = responses.map((m) => agentResponseCodec.decode(m.payload));
    expect(findings).toHaveLength(ids.length * 2);
    expect(findings.every((r) => r.message_type === 'explain' && /\/finding\/[01]$/.test(r.explain_id ?? ''))).toBe(true);
    expect(bus.subscriptions(AGGREGATION).find((s) => s.name.endsWith('--aggregation'))).toMatchObject({ backlog: 0, unacked: 0 });
    await second.close();
  });

  it('cuts every result to the same length when the synthesis request would not fit one message, and carries them once', async () => {
    const next = await observe(NEXT);
    await replica(bus, 60_000, 3_000);
    const aggregation = await bus.createProducer(AGGREGATION);
    await aggregation.send(fanInMessage('fan-out', template('big', 2), { id: 'client-big' }, Date.now()));
    for (const goal of ['g1', 'g2']) await aggregation.send(fanInMessage('completion', completion('big', goal, goal.repeat(1_000)), { id: 'client-big' }, Date.now()));
    await settle();
    expect(next).toHaveLength(1);
    expect(next[0]!.payload.length).toBeLessThanOrEqual(2_250);
    const step = agentRequestCodec.decode(next[0]!.payload).history.at(-1)!;
    const cut = Object.values(step.subagent_results);
    expect(cut).toHaveLength(2);
    for (const text of cut) expect(text).toMatch(/^[g12]+… \(2000 characters\)$/);
    expect(cut[0]!.length).toBe(cut[1]!.length);
    // Not also in the observation, as TrustGraph's aggregator writes them.
    expect(step.observation).toBe('2 subagent results, in subagent_results');
    expect(outcomes).toEqual(['completed']);
  });

  it('ends the conversation with one error when the synthesis request cannot fit even with its results cut: never redelivered', async () => {
    fakeClock();
    const next = await observe(NEXT);
    const responses = await observe(RESPONSE);
    await replica(bus, 60_000, 3_000);
    const aggregation = await bus.createProducer(AGGREGATION);
    const huge = makeAgentRequest({ ...template('huge', 1), question: 'q'.repeat(4_000) });
    await aggregation.send(fanInMessage('fan-out', huge, { id: 'client-huge' }, Date.now()));
    await aggregation.send(fanInMessage('completion', completion('huge', 'g1'), { id: 'client-huge' }, Date.now()));
    await settle();
    // Past the bus's nack delay: a nacked request would be back by now.
    await advanceUntil(() => false, 300);
    expect(next).toEqual([]);
    const error = onlyError(responses.filter((m) => agentResponseCodec.decode(m.payload).message_type === 'error'), 'client-huge');
    // Three quarters of the 3000 bytes a message carries: what the agent accepts as a request.
    expect(error.error?.message).toMatch(/^the supervisor's synthesis request cannot be sent: .* over the 2250 bytes .*--max-request-bytes/);
    expect(outcomes).toEqual(['failed']);
    expect(bus.subscriptions(AGGREGATION).find((s) => s.name.endsWith('--aggregation'))).toMatchObject({ backlog: 0, unacked: 0 });
  });

  it('a replica that lost its broker connection gives back what it held: no late timeout error after another completed it', async () => {
    fakeClock();
    const next = await observe(NEXT);
    const responses = await observe(RESPONSE);
    const { transport: aTransport, status, consumers } = ownView(bus);
    const a = await replica(aTransport, 200);
    const aggregation = await bus.createProducer(AGGREGATION);
    await aggregation.send(fanInMessage('fan-out', template('moved', 2), { id: 'client-moved' }, Date.now()));
    await aggregation.send(fanInMessage('completion', completion('moved', 'g1'), { id: 'client-moved' }, Date.now()));
    await settle();
    // A's connection drops: the broker takes its consumer's messages back and gives them to B, the key's new owner.
    status.lost('connection dropped');
    await consumers[0]!.close();
    // B's own timeout is long: what A gives back reaches it after the nack delay, after the last completion.
    const b = await replica(bus);
    await aggregation.send(fanInMessage('completion', completion('moved', 'g2'), { id: 'client-moved' }, Date.now()));
    await advanceUntil(() => next.length > 0, 5_000);
    expect(next).toHaveLength(1);
    // Past A's timeout: A holds nothing of it any more, so the client gets no error after its synthesis.
    await advanceUntil(() => false, 500);
    expect(responses.map((m) => agentResponseCodec.decode(m.payload).message_type)).toEqual(['explain', 'explain']);
    await a.close();
    await b.close();
  });

  it('after a lost connection whose consumer stayed, what it held comes back to it and the fan-out completes', async () => {
    fakeClock();
    const next = await observe(NEXT);
    const { transport, status } = ownView(bus);
    const owner = await replica(transport);
    const aggregation = await bus.createProducer(AGGREGATION);
    await aggregation.send(fanInMessage('fan-out', template('kept', 2), { id: 'client-kept' }, Date.now()));
    await aggregation.send(fanInMessage('completion', completion('kept', 'g1'), { id: 'client-kept' }, Date.now()));
    await settle();
    // Another of its links dropped; this consumer's did not, so the broker would not redeliver on its own.
    status.lost('a producer link dropped');
    status.set(true);
    await aggregation.send(fanInMessage('completion', completion('kept', 'g2'), { id: 'client-kept' }, Date.now()));
    await advanceUntil(() => next.length > 0, 5_000);
    expect(next).toHaveLength(1);
    expect(agentRequestCodec.decode(next[0]!.payload).history.at(-1)!.subagent_results).toEqual({ g1: 'answer g1', g2: 'answer g2' });
    expect(bus.subscriptions(AGGREGATION).find((s) => s.name.endsWith('--aggregation'))).toMatchObject({ backlog: 0, unacked: 0 });
    await owner.close();
  });

  it('ends a stalled fan-out with one error to the client once the timeout passes, and acknowledges what it held', async () => {
    fakeClock();
    const responses = await observe(RESPONSE);
    const owner = await replica(bus, 200);
    const aggregation = await bus.createProducer(AGGREGATION);
    await aggregation.send(fanInMessage('fan-out', template('stalled', 3), { id: 'client-stalled' }, Date.now()));
    await aggregation.send(fanInMessage('completion', completion('stalled', 'g1'), { id: 'client-stalled' }, Date.now()));
    await advanceUntil(() => responses.length > 0, 5_000);
    // Longer than the timeout again: no second error.
    await advanceUntil(() => false, 300);
    expect(responses).toHaveLength(1);
    const error = agentResponseCodec.decode(responses[0]!.payload);
    expect(error).toMatchObject({ message_type: 'error', end_of_dialog: true });
    expect(error.error?.message).toContain('1 of 3 completed');
    expect(responses[0]!.properties.id).toBe('client-stalled');
    expect(outcomes).toEqual(['timed-out']);
    expect(bus.subscriptions(AGGREGATION).find((s) => s.name.endsWith('--aggregation'))).toMatchObject({ unacked: 0 });
    await owner.close();
  });

  it('ends the conversation of an aggregation message it cannot read with one error, and acknowledges it', async () => {
    const responses = await observe(RESPONSE);
    const owner = await replica(bus);
    const aggregation = await bus.createProducer(AGGREGATION);
    await aggregation.send({ payload: Buffer.from('not json'), properties: { id: 'client-garbage', 'tg-agent-fan-in': 'completion' }, key: 'k' });
    await settle();
    const error = onlyError(responses, 'client-garbage');
    expect(error.error?.message).toMatch(/^the supervisor aggregation message of this conversation cannot be read \(.+\); the conversation ends here$/);
    expect(bus.subscriptions(AGGREGATION).find((s) => s.name.endsWith('--aggregation'))).toMatchObject({ unacked: 0 });
    await owner.close();
  });

  it("turns away a second conversation's completion for a fan-in another conversation's completions wait on, and counts it unclaimed", async () => {
    const responses = await observe(RESPONSE);
    const owner = await replica(bus);
    const aggregation = await bus.createProducer(AGGREGATION);
    await aggregation.send(fanInMessage('completion', completion('shared', 'g1'), { id: 'client-first' }, Date.now()));
    await aggregation.send(fanInMessage('completion', completion('shared', 'g2'), { id: 'client-second' }, Date.now()));
    await settle();
    onlyError(responses, 'client-second');
    expect(outcomes).toEqual(['unclaimed']);
    await owner.close();
  });
});
