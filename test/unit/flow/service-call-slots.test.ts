/**
 * The bound on requests in flight to each service request topic as the agent wires it: one per topic, shared by
 * every client of the topic (two tool services on one queue here), its option, its gauge, and what a tool call
 * that timed out waiting for a slot says.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { CallQueueTimeoutError, RequestTimeoutError } from '../../../src/bus/errors.js';
import { MemoryTransport } from '../../../src/bus/memory/memory-transport.js';
import type { IncomingMessage } from '../../../src/bus/transport.js';
import { DEFAULT_SERVICE_MAX_IN_FLIGHT, ServiceCallSlots } from '../../../src/flow/service-call-slots.js';
import { ToolServiceClients } from '../../../src/flow/tool-service-clients.js';
import { AgentMetrics } from '../../../src/observability/metrics.js';
import { loadSettings } from '../../../src/settings.js';
import type { ToolServiceDescriptor } from '../../../src/tools/index.js';
import { notSentTwice } from '../../../src/tools/run/tool-clients.js';
import { turns, until } from '../../support/event-loop-turns.js';

const PROMPT = 'non-persistent://tg/request/prompt:default';
const descriptor = (key: string): ToolServiceDescriptor => ({
  key,
  requestQueue: 'request:tg:joke',
  responseQueue: 'response:tg:joke',
  configParams: [],
  idempotent: true,
  config: {},
});

describe('ServiceCallSlots', () => {
  it('keeps one bound per request topic, named after the service, at 500 by default', () => {
    const slots = new ServiceCallSlots();
    const prompt = slots.for('prompt', PROMPT);
    expect(slots.for('prompt', PROMPT)).toBe(prompt);
    expect(slots.for('graph-rag', 'non-persistent://tg/request/graph-rag:default')).not.toBe(prompt);
    expect(prompt.limit).toBe(DEFAULT_SERVICE_MAX_IN_FLIGHT);
    expect(DEFAULT_SERVICE_MAX_IN_FLIGHT).toBe(500);
    for (let i = 0; i < 502; i++) prompt.enter(() => undefined);
    expect(slots.waiting()).toEqual([
      { service: 'prompt', topic: PROMPT, waiting: 2 },
      { service: 'graph-rag', topic: 'non-persistent://tg/request/graph-rag:default', waiting: 0 },
    ]);
  });

  it('is set by --service-max-in-flight or TG_AGENT_SERVICE_MAX_IN_FLIGHT, and refuses 0', () => {
    expect(loadSettings([], {}).settings?.serviceMaxInFlight).toBe(500);
    expect(loadSettings(['--service-max-in-flight', '64'], {}).settings?.serviceMaxInFlight).toBe(64);
    expect(loadSettings([], { TG_AGENT_SERVICE_MAX_IN_FLIGHT: '128' }).settings?.serviceMaxInFlight).toBe(128);
    expect(() => loadSettings(['--service-max-in-flight', '0'], {})).toThrow(/--service-max-in-flight \(TG_AGENT_SERVICE_MAX_IN_FLIGHT\): Too small/);
  });

  it('shows the calls waiting per service and topic in tg_agent_service_calls_waiting at each scrape', async () => {
    const metrics = new AgentMetrics('agent-manager', { defaultMetrics: false });
    const slots = new ServiceCallSlots(1);
    metrics.scraped.watchCallsWaiting(() => slots.waiting());
    const tickets = [0, 1, 2].map(() => slots.for('prompt', PROMPT).enter(() => undefined));
    const waiting = async (): Promise<number> => {
      const text = await metrics.registry.metrics();
      const line = /^tg_agent_service_calls_waiting\{(.*)\} (\S+)$/m.exec(text);
      expect(line?.[1]?.split(',').sort()).toEqual(['processor="agent-manager"', 'service="prompt"', `topic="${PROMPT}"`]);
      return Number(line?.[2]);
    };
    expect(await waiting()).toBe(2);
    for (const ticket of tickets) ticket.release();
    expect(await waiting()).toBe(0);
  });
});

describe('tool service clients with a bound on their calls in flight', () => {
  const bus = new MemoryTransport();
  afterEach(async () => {
    await bus.close();
  });

  it('share one bound between two tool services on the same request queue', async () => {
    const received: IncomingMessage[] = [];
    await bus.subscribe({ topic: 'non-persistent://tg/request/joke', subscription: 'joke-service', subscriptionType: 'Shared', handler: async (m) => void received.push(m) });
    const replies = await bus.createProducer('non-persistent://tg/response/joke');
    const clients = new ToolServiceClients({ transport: bus, processorId: 'agent-manager', timeoutMs: 60_000, logger: pino({ level: 'silent' }), callSlots: new ServiceCallSlots(1) });
    try {
      const [first, second] = await Promise.all([clients.get(descriptor('puns')), clients.get(descriptor('limericks'))]);
      expect(first).not.toBe(second);
      const isLast = { isLast: () => true };
      const calls = [first.stream({ config: '{}', arguments: '{"n":1}' }, isLast).next(), second.stream({ config: '{}', arguments: '{"n":2}' }, isLast).next()];
      await until(() => received.length === 1);
      await turns(50);
      expect(received).toHaveLength(1);
      const answer = (m: IncomingMessage): Promise<void> =>
        replies.send({ payload: Buffer.from(JSON.stringify({ error: null, response: 'ha', end_of_stream: true })), properties: { id: m.properties.id! } });
      await answer(received[0]!);
      await until(() => received.length === 2);
      await answer(received[1]!);
      await expect(Promise.all(calls)).resolves.toHaveLength(2);
    } finally {
      await clients.close();
    }
  });
});

describe("a tool call's timeout", () => {
  it('says a call that may act may or may not have run, unless it timed out waiting for a slot and was never sent', () => {
    const sent = notSentTwice(new RequestTimeoutError('non-persistent://tg/request/mcp-tool', 1000, 'id-1'), 'an MCP tool');
    expect(String(sent)).toMatch(/may or may not have run/);
    const queue = { service: 'mcp-tool', limit: 500, inFlight: 500, queued: 3, advice: 'raise it' };
    const neverSent = new CallQueueTimeoutError('non-persistent://tg/request/mcp-tool', 1000, 'id-2', queue);
    expect(notSentTwice(neverSent, 'an MCP tool')).toBe(neverSent);
    expect(String(neverSent)).toMatch(/was never sent/);
  });
});
