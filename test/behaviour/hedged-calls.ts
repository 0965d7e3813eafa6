/**
 * Hedged calls, on any harness transport: a call to a service that only reads, whose request the service drops,
 * is sent once more when its first reply is overdue (the hedge deadline: here 1 s, the ceiling, as nothing is
 * known of the service yet), and the conversation ends with its answer long before the call's own 60 s timeout;
 * a call that may act (an MCP tool, a tool service not configured idempotent) is sent once, and ends with an
 * error saying so at its own 2 s deadline while the conversation goes on.
 */
import { describe, expect, it } from 'vitest';
import type { ServiceStandIn } from '../../dev/stand-ins/service-stand-in.js';
import { toolServiceTool } from '../../dev/flow-config.js';
import type { AgentHarness, AskResult } from '../support/agent-harness.js';
import { harnessPerTest, onTarget, type HarnessTarget } from '../support/harness-per-test.js';
import { sample, scrape } from '../support/prometheus-text.js';
import { THREE_TOOLS, useTool } from '../support/three-tools.js';

/** Each call waits 60 s for its first reply; the acting tools 2 s. An ask fails after 20 s. */
const SETTINGS = {
  requestTimeoutSeconds: 60,
  serviceTimeouts: { 'mcp-tool': { firstSeconds: 2 }, 'tool-service': { firstSeconds: 2 } },
  hedgeFloorSeconds: 0.5,
  hedgeCeilingSeconds: 1,
};
const ASK_TIMEOUT_MS = 20_000;

/** The service answers nothing to its next `count` requests (they are received and acknowledged). */
function dropNext<Req, Res>(bus: ServiceStandIn<Req, Res>, count = 1): void {
  const answer = bus.handle;
  let dropped = 0;
  bus.handle = (request, ctx) => (dropped++ < count ? [] : answer(request, ctx));
}

const hedges = async (h: AgentHarness, service: string, outcome: string): Promise<number | undefined> =>
  sample(await scrape(h.httpUrl()), 'tg_agent_hedged_requests_total', { processor: 'agent-manager', service, outcome });

function expectAnswer(result: AskResult, content: string | RegExp): void {
  expect(result.responses.filter((r) => r.end_of_dialog)).toHaveLength(1);
  expect(result.last).toMatchObject({ message_type: 'answer', end_of_dialog: true, error: null });
  expect(result.last.content).toMatch(content);
}

export function hedgedCallsSuite(target: HarnessTarget): void {
  describe(onTarget('hedged calls', target), () => {
    const start = harnessPerTest(target, {
      ...THREE_TOOLS,
      tools: { ...THREE_TOOLS.tools, puns: toolServiceTool('puns', 'pun-service', [{ name: 'topic', type: 'string', description: 'Topic' }]) },
      toolServices: { ...THREE_TOOLS.toolServices, 'pun-service': { handler: (args) => `a pun about ${String(args.topic)}`, idempotent: true } },
      settings: SETTINGS,
      app: {},
    });

    it('a prompt request the service dropped is sent once more, and the conversation ends with its answer', async () => {
      const h = await start();
      dropNext(h.prompt.bus);
      const result = await h.ask({ question: useTool('weather') }, { timeoutMs: ASK_TIMEOUT_MS });
      expectAnswer(result, 'sunny in Paris');
      // The first call was asked twice (the same terms, two ids), the second once.
      const calls = h.prompt.bus.received;
      expect(calls).toHaveLength(3);
      expect(calls[1]!.request).toEqual(calls[0]!.request);
      expect(calls[1]!.properties.id).not.toBe(calls[0]!.properties.id);
      expect(await hedges(h, 'prompt', 'hedge_first')).toBe(1);
      expect(await hedges(h, 'prompt', 'original_first')).toBe(0);
    });

    it('a graph RAG query the service dropped is sent once more, and its streamed answer is the observation', async () => {
      const h = await start();
      dropNext(h.graphRag.bus);
      const result = await h.ask({ question: useTool('kq') }, { timeoutMs: ASK_TIMEOUT_MS });
      expectAnswer(result, 'graph answer');
      expect(h.graphRag.calls).toHaveLength(2);
      expect(await hedges(h, 'graph-rag', 'hedge_first')).toBe(1);
    });

    it('an MCP tool request the service dropped is not sent again: an error at its own deadline, and the conversation goes on', async () => {
      const h = await start();
      dropNext(h.mcp.bus);
      const result = await h.ask({ question: useTool('weather') }, { timeoutMs: ASK_TIMEOUT_MS });
      expectAnswer(result, /^Error: no response to request \S+ on \S+mcp-tool\S+ within 2000 ms; not sent again: an MCP tool may act on a request, so it may or may not have run$/);
      expect(h.mcp.bus.calls).toHaveLength(1);
      expect(await hedges(h, 'mcp-tool', 'hedge_first')).toBeUndefined();
    });

    it('a tool service is not sent again unless its config entry says it is idempotent', async () => {
      const h = await start();
      const jokes = h.toolServices['joke-service']!;
      const puns = h.toolServices['pun-service']!;
      dropNext(jokes.bus);
      const acting = await h.ask({ question: useTool('jokes') }, { timeoutMs: ASK_TIMEOUT_MS });
      expectAnswer(acting, /within 2000 ms; not sent again: tool service "joke-service" may act on a request/);
      expect(jokes.bus.calls).toHaveLength(1);

      dropNext(puns.bus);
      const idempotent = await h.ask({ question: useTool('puns') }, { timeoutMs: ASK_TIMEOUT_MS });
      expectAnswer(idempotent, 'a pun about cats');
      expect(puns.bus.calls).toHaveLength(2);
      expect(await hedges(h, 'tool-service:pun-service', 'hedge_first')).toBe(1);
    });
  });
}
