/**
 * The agent on one of TrustGraph's other pub/sub backends (`--pubsub-backend rabbitmq | kafka`), against the run's
 * real broker (test/support/global-brokers.ts): the behaviour suites that run in memory and on Pulsar, here
 * with the agent, its stand-ins and the gateway all on the backend's topics as TrustGraph names them; 1 000
 * conversations at once; a mixed fleet with TrustGraph's own agent on one flow; and the agent asked by
 * TrustGraph 2.11.1's own gateway code through TrustGraph's own backend code.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { knowledgeQueryTool, mcpTool } from '../../dev/flow-config.js';
import type { PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import type { Transport } from '../../src/bus/transport.js';
import { startGatewayClient } from './gateway-client.js';
import { startTrustGraphProcess, trustgraphVenv, type TrustGraphProcess } from '../../dev/trustgraph-pieces.js';
import { sample, scrape } from './prometheus-text.js';
import { startAgentHarness, type AgentHarness } from './agent-harness.js';
import type { HarnessTarget } from './harness-per-test.js';
import { askAsGateway, contentOf, expectOneFinal, typesOf } from './trustgraph-gateway.js';
import { agentBehaviourSuite } from '../behaviour/agent-behaviour.js';
import { keptNextSuite } from '../behaviour/kept-next.js';
import { hedgedCallsSuite } from '../behaviour/hedged-calls.js';
import { malformedInputSuite } from '../behaviour/malformed-input.js';
import { specWorkflowSuite } from '../behaviour/spec-workflow.js';
import { supervisorFanInSuite } from '../behaviour/supervisor-fan-in.js';
import { securityHardeningSuite } from '../behaviour/security-hardening.js';

export interface BackendUnderTest {
  /** As people write it: `RabbitMQ`, `Kafka`. */
  name: string;
  target: HarnessTarget;
  /** A transport of its own on the backend, as TrustGraph's gateway is a process of its own. */
  connect(): Transport;
  /** The broker as gateway_agent.py takes it (`amqp://…`, `kafka://…`). */
  gatewayUrl: string;
  /** TrustGraph's options that put one of its processors on this backend. */
  trustgraphArgs: string[];
  /** Before the mixed fleet starts on `workspace`: what an operator does so that both agents serve. */
  beforeMixedFleet?(workspace: string): Promise<void>;
  /** How the backend shares one flow's requests among its consumers, for the mixed fleet's assertion. */
  shares: string;
}

export function backendSuites(backend: BackendUnderTest): void {
  const { target } = backend;
  specWorkflowSuite(target);
  keptNextSuite(target);
  hedgedCallsSuite(target);
  agentBehaviourSuite(target);
  malformedInputSuite(target);
  supervisorFanInSuite(target);
  securityHardeningSuite(target);

  describe(`1 000 conversations at once on ${backend.name} (concurrency 16)`, () => {
    let harness: AgentHarness | undefined;
    let gatewayTransport: Transport | undefined;
    afterEach(async () => {
      await gatewayTransport?.close();
      await harness?.stop();
      harness = undefined;
    });

    it('every conversation ends exactly once with its own answer, the tool called once per tool conversation', async () => {
      const script = (terms: PromptTerms): string => {
        const n = Number(/^conversation (\d+)$/.exec(String(terms.question))?.[1] ?? -1);
        const history = terms.history as { observation: string }[];
        if (n % 2 === 1) return `Thought: easy\nFinal Answer: answer to conversation ${n}`;
        if (history.length === 0) return `Thought: ask the tool\nAction: lookup\nArgs: {"n": ${n}}`;
        return `Thought: done\nFinal Answer: ${history[0]?.observation ?? ''}`;
      };
      harness = await startAgentHarness({
        ...target,
        script,
        tools: { lookup: mcpTool('lookup', 'lookup-mcp', [{ name: 'n', type: 'integer', description: 'which' }]) },
        mcpTools: { 'lookup-mcp': (params) => `looked up ${String((params as { n?: unknown }).n)}` },
        settings: { concurrency: 16, requestTimeoutSeconds: 60 },
      });
      // The gateway on a connection of its own, as TrustGraph's gateway is a process of its own.
      gatewayTransport = backend.connect();
      const gateway = await startGatewayClient({ transport: gatewayTransport, workspace: harness.workspace });
      const ids = await Promise.all(Array.from({ length: 1000 }, (_, n) => gateway.send({ question: `conversation ${n}` })));
      await gateway.waitEnded(ids, 150_000);
      // Anything late (a second end_of_dialog) would arrive now.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      for (const [n, id] of ids.entries()) {
        expect(gateway.conversation(id).ends).toBe(1);
        expect(gateway.last(id)).toMatchObject({ message_type: 'answer', content: n % 2 === 1 ? `answer to conversation ${n}` : `looked up ${n}` });
      }
      const called = harness.mcp.calls.map((c) => Number((c.parameters as { n?: unknown }).n));
      expect(called.sort((a, b) => a - b)).toEqual(ids.map((_, n) => n).filter((n) => n % 2 === 0));
      await gateway.close();
    }, 200_000);
  });

  describe(`a mixed fleet on ${backend.name}: TrustGraph's own agent and tg-agent on one flow`, { timeout: 240_000 }, () => {
    let harness: AgentHarness | undefined;
    let trustgraph: TrustGraphProcess | undefined;
    beforeAll(async () => {
      await trustgraphVenv();
    }, 11 * 60_000);
    afterEach(async () => {
      await trustgraph?.stop();
      trustgraph = undefined;
      await harness?.stop();
      harness = undefined;
    });

    it('they share the flow\'s queue, and every request ends exactly once with its answer', async () => {
      const workspace = `ws-${randomBytes(4).toString('hex')}`;
      await backend.beforeMixedFleet?.(workspace);
      harness = await startAgentHarness({
        ...target,
        workspace,
        app: {},
        configQueues: 'trustgraph',
        librarian: true,
        // TrustGraph's agent answers a workspace it holds no tools for with an error.
        tools: { 'knowledge-query': knowledgeQueryTool('knowledge-query') },
        script: () => 'Thought: I know this\nFinal Answer: done',
      });
      // TrustGraph's orchestrator under the same id reads the same `processor:agent-manager` flow entry, so it
      // shares the same subscription, on TrustGraph's own backend code.
      trustgraph = await startTrustGraphProcess('agent-orchestrator', [
        ...backend.trustgraphArgs,
        '--no-metrics', '--no-loki-enabled', '--log-level', 'INFO',
        '--id', 'agent-manager',
      ]);
      await trustgraph.waitForOutput(new RegExp(`Started flow: ${harness.workspace}/${harness.flow}\\b`), 90_000);
      await trustgraph.waitForOutput(new RegExp(`Loaded \\d+ tools for workspace ${harness.workspace}`), 60_000);
      const gateway = await startGatewayClient({ transport: harness.transport, workspace: harness.workspace });
      const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => gateway.send({ question: `question ${i}`, pattern: 'react' })));
      await gateway.waitEnded(ids, 120_000);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      for (const id of ids) {
        expect(gateway.conversation(id).ends).toBe(1);
        expect(gateway.last(id)).toMatchObject({ message_type: 'answer', content: 'done', end_of_dialog: true });
      }
      // Both served: what the backend does with one flow's requests and several consumers (see `shares`).
      const ours = sample(await scrape(harness.httpUrl()), 'tg_consumer_processing_total', {
        processor: 'agent-manager',
        consumer: harness.flows.default!.topics.request!,
        status: 'ok',
      });
      expect(ours).toBeGreaterThan(0);
      expect(ours).toBeLessThan(ids.length);
      await gateway.close();
    });
  });

  describe(`TrustGraph's gateway request path on its ${backend.name} backend`, () => {
    let harness: AgentHarness | undefined;
    beforeAll(async () => {
      await trustgraphVenv();
    }, 11 * 60_000);
    afterEach(async () => {
      await harness?.stop();
      harness = undefined;
    });

    it('a tool iteration: TrustGraph publishes the request, our agent answers, TrustGraph reads every response', async () => {
      harness = await startAgentHarness({
        ...target,
        tools: { 'knowledge-query': knowledgeQueryTool('knowledge-query') },
        graphRag: () => 'X is a test thing.',
        script: (terms) =>
          (terms.history as unknown[]).length === 0
            ? 'Thought: I need to look this up\nAction: knowledge-query\nArgs: {"question": "What is X?"}'
            : 'Thought: done\nFinal Answer: X is a test thing.',
      });
      const result = await askAsGateway(backend.gatewayUrl, harness, { question: 'Tell me about X', group: ['default'], state: 'undefined' });
      expect(result.request).toMatchObject({ question: 'Tell me about X', group: ['default'], state: 'undefined', streaming: false });
      expectOneFinal(result);
      expect(typesOf(result)).toBe('explain thought explain explain observation explain thought explain answer');
      expect(contentOf(result, 'observation')).toBe('X is a test thing.');
      expect(result.responses.at(-1)?.translated).toMatchObject({ message_type: 'answer', content: 'X is a test thing.', end_of_dialog: true });
      expect(harness.graphRag.calls.map((c) => c.query)).toEqual(['What is X?']);
    });

    it('streaming: the chunks reassemble through TrustGraph\'s deserialiser, and only the last message is final', async () => {
      harness = await startAgentHarness({ ...target, script: () => ['Thought: The capital', ' of France is Paris\nFinal', ' Answer: Par', 'is.'] });
      const result = await askAsGateway(backend.gatewayUrl, harness, { question: 'What is the capital of France?', streaming: true });
      expectOneFinal(result);
      expect(contentOf(result, 'thought').trim()).toBe('The capital of France is Paris');
      expect(contentOf(result, 'answer').trim()).toBe('Paris.');
    });
  });
}
