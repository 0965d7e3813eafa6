/**
 * TrustGraph services that never answer, on the real broker. Every wait for a reply is bounded by the
 * request timeout (here 2 s; TrustGraph's default 600 s), and once a stream has started each further wait by the
 * stream gap timeout (here 1 s; default 60 s): a tool that never answers
 * becomes an error observation and the conversation goes on; a prompt service that never answers ends the
 * dialog with an error response. Nothing hangs, and the agent keeps serving once the services answer again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseServiceTimeouts } from '../../src/flow/service-timeouts.js';
import { makeGraphRagResponse, type GraphRagResponse } from '../../src/wire/index.js';
import { startAgentHarness, type AgentHarness, type AskResult } from '../support/agent-harness.js';
import { THREE_TOOLS, useTool } from '../support/three-tools.js';
import { brokerUrls } from '../support/transport-contract.js';
import { testTransports } from '../support/transports.js';

const { webSocketUrl } = brokerUrls();

const TIMEOUT_S = 2;
const TIMEOUT_MS = TIMEOUT_S * 1000;
/** The wait between two replies of a stream (`--stream-gap-timeout`). */
const GAP_S = 1;
/**
 * Room for the rest of a conversation (2 iterations, ~20 messages) in the ask's own wait: a conversation that
 * waited longer than its timeouts fails the ask. No upper bound is asserted on the clock.
 */
const GRACE_MS = 10_000;

/**
 * `ask`, timed on the monotonic clock the agent's timers run on, so that "not before the timeout" holds exactly;
 * the error text names which timeout ended the wait.
 */
async function timedAsk(h: AgentHarness, question: string, streaming = false): Promise<{ result: AskResult; ms: number }> {
  const started = performance.now();
  const result = await h.ask({ question, streaming }, { timeoutMs: 4 * TIMEOUT_MS + GRACE_MS });
  return { result, ms: performance.now() - started };
}

/** The conversation went on after the tool call failed: observation → next → answer with that observation. */
function expectTimeoutObservation(result: AskResult, service: RegExp, detail: RegExp): void {
  const observation = result.responses.find((r) => r.message_type === 'observation');
  expect(observation?.content).toMatch(/^Error: no (further )?response to request \S+ on \S+/);
  expect(observation?.content).toMatch(service);
  expect(observation?.content).toMatch(detail);
  expect(result.nextRequests).toHaveLength(1);
  expect(result.nextRequests[0]?.history[0]?.observation).toBe(observation?.content);
  expect(result.last).toMatchObject({ message_type: 'answer', end_of_dialog: true, error: null, content: observation?.content });
  expect(result.responses.filter((r) => r.end_of_dialog)).toHaveLength(1);
}

describe.each(testTransports())('downstream services that never answer (real broker) [%s]', (transportKind) => {
  let h: AgentHarness;

  beforeAll(async () => {
    h = await startAgentHarness({
      transport: transportKind,
      webSocketUrl,
      ...THREE_TOOLS,
      settings: { requestTimeoutSeconds: TIMEOUT_S, streamGapTimeoutSeconds: GAP_S },
    });
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('an MCP tool that swallows requests: after the request timeout the call is an error observation and the dialog goes on', async () => {
    const calls = h.mcp.bus.calls.length;
    h.mcp.bus.available = false;
    try {
      const { result, ms } = await timedAsk(h, useTool('weather'));
      expectTimeoutObservation(result, /mcp-tool/, new RegExp(`within ${TIMEOUT_MS} ms; not sent again: an MCP tool may act on a request, so it may or may not have run$`));
      // The request reached the tool service (and was swallowed there); the wait was the timeout, not less.
      expect(h.mcp.bus.calls.length).toBe(calls + 1);
      expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS);
    } finally {
      h.mcp.bus.available = true;
    }
  });

  it('a graph-rag stream that stops half-way: the wait for its next message times out after the stream gap, not the request timeout', async () => {
    const saved = h.graphRag.bus.handle;
    h.graphRag.bus.handle = async function* (): AsyncGenerator<GraphRagResponse> {
      yield makeGraphRagResponse({ message_type: 'explain', explain_id: 'urn:x', explain_graph: 'urn:graph:retrieval' });
      await new Promise(() => undefined);
    };
    try {
      const { result, ms } = await timedAsk(h, useTool('kq'));
      expectTimeoutObservation(result, /graph-rag/, new RegExp(`within ${GAP_S * 1000} ms \\(after 1 replies\\)$`));
      expect(ms).toBeGreaterThanOrEqual(GAP_S * 1000);
    } finally {
      h.graphRag.bus.handle = saved;
    }
  });

  it('a tool service that never answers: an error observation, the dialog goes on', async () => {
    const service = h.toolServices['joke-service'];
    if (!service) throw new Error('tool service stand-in missing');
    service.bus.available = false;
    try {
      const { result } = await timedAsk(h, useTool('jokes'));
      expectTimeoutObservation(result, new RegExp(service.requestQueue.replace(/[/:.-]/g, '\\$&')), /within 2000 ms; not sent again: tool service "joke-service" may act on a request/);
    } finally {
      service.bus.available = true;
    }
  });

  it('the prompt service never answering ends the dialog with an error response, streaming or not', async () => {
    h.prompt.bus.available = false;
    try {
      for (const streaming of [false, true]) {
        const { result, ms } = await timedAsk(h, 'hello', streaming);
        expect(result.responses.filter((r) => r.end_of_dialog)).toHaveLength(1);
        expect(result.last).toMatchObject({ message_type: 'error', end_of_message: true, end_of_dialog: true });
        expect(result.last.error?.type).toBe('agent-error');
        expect(result.last.error?.message).toMatch(new RegExp(`^no response to request \\S+ on \\S+prompt-rag\\S+ within ${TIMEOUT_MS} ms$`));
        expect(result.nextRequests).toHaveLength(0);
        expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS);
        }
    } finally {
      h.prompt.bus.available = true;
    }
  });

  it('the prompt service going silent mid-conversation: the tool result is observed, then an error ends the dialog', async () => {
    const saved = h.mcp.tools['weather-mcp'];
    h.mcp.tools['weather-mcp'] = () => {
      h.prompt.bus.available = false;
      return 'sunny, and the model has left';
    };
    try {
      const { result } = await timedAsk(h, useTool('weather'));
      expect(result.responses.find((r) => r.message_type === 'observation')?.content).toBe('sunny, and the model has left');
      expect(result.nextRequests).toHaveLength(1);
      expect(result.responses.filter((r) => r.end_of_dialog)).toHaveLength(1);
      expect(result.last).toMatchObject({ message_type: 'error', end_of_dialog: true });
      expect(result.last.error?.message).toMatch(/^no response to request \S+ on \S+prompt-rag\S+ within 2000 ms$/);
    } finally {
      h.prompt.bus.available = true;
      if (saved) h.mcp.tools['weather-mcp'] = saved;
    }
  });

  it('answers normally once every service answers again', async () => {
    expect((await h.ask({ question: useTool('weather') })).last.content).toBe('sunny in Paris');
    expect((await h.ask({ question: useTool('kq') })).last.content).toBe('graph answer');
    expect((await h.ask({ question: useTool('jokes') })).last.content).toBe('a joke about cats');
    expect((await h.ask({ question: 'hello' })).last).toMatchObject({ message_type: 'answer', content: 'ok' });
  });
});

describe('a per-service timeout (--service-timeouts) (real broker)', () => {
  let h: AgentHarness;

  beforeAll(async () => {
    h = await startAgentHarness({
      webSocketUrl,
      ...THREE_TOOLS,
      // Everything else may take 30 s; the MCP tool service gets 1 s.
      settings: { requestTimeoutSeconds: 30, serviceTimeouts: parseServiceTimeouts('mcp-tool=1') },
    });
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('bounds that service by its own timeout, not --request-timeout', async () => {
    h.mcp.bus.available = false;
    try {
      const { result } = await timedAsk(h, useTool('weather'));
      expectTimeoutObservation(result, /mcp-tool/, /within 1000 ms; not sent again: an MCP tool may act/);
    } finally {
      h.mcp.bus.available = true;
    }
  });
});
