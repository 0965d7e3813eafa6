/**
 * The agent on TrustGraph's RabbitMQ backend (`--pubsub-backend rabbitmq`), against the run's real RabbitMQ
 * (test/support/global-rabbitmq.ts): the behaviour suites that run in memory and on Pulsar, here with the agent,
 * its stand-ins and the gateway all on RabbitMQ exchanges and queues named as TrustGraph names them; and the
 * agent asked by TrustGraph 2.11.1's own gateway code through TrustGraph's own RabbitMQ backend (aio-pika).
 */
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { knowledgeQueryTool } from '../../dev/flow-config.js';
import { trustgraphVenv } from '../../dev/trustgraph-pieces.js';
import { startAgentHarness, type AgentHarness } from '../support/agent-harness.js';
import { askAsGateway, contentOf, expectOneFinal, typesOf } from '../support/trustgraph-gateway.js';
import { agentBehaviourSuite } from '../behaviour/agent-behaviour.js';
import { keptNextSuite } from '../behaviour/kept-next.js';
import { malformedInputSuite } from '../behaviour/malformed-input.js';
import { specWorkflowSuite } from '../behaviour/spec-workflow.js';
import { supervisorFanInSuite } from '../behaviour/supervisor-fan-in.js';
import { securityHardeningSuite } from '../behaviour/security-hardening.js';

const rabbitmqUrl = inject('rabbitmqUrl');

if (rabbitmqUrl) {
  const target = { transport: 'rabbitmq' as const, rabbitmqUrl };
  specWorkflowSuite(target);
  keptNextSuite(target);
  agentBehaviourSuite(target);
  malformedInputSuite(target);
  supervisorFanInSuite(target);
  securityHardeningSuite(target);

  describe("TrustGraph's gateway request path on its RabbitMQ backend", () => {
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
      const result = await askAsGateway(rabbitmqUrl, harness, { question: 'Tell me about X', group: ['default'], state: 'undefined' });
      expect(result.request).toMatchObject({ question: 'Tell me about X', group: ['default'], state: 'undefined', streaming: false });
      expectOneFinal(result);
      expect(typesOf(result)).toBe('explain thought explain explain observation explain thought explain answer');
      expect(contentOf(result, 'observation')).toBe('X is a test thing.');
      expect(result.responses.at(-1)?.translated).toMatchObject({ message_type: 'answer', content: 'X is a test thing.', end_of_dialog: true });
      expect(harness.graphRag.calls.map((c) => c.query)).toEqual(['What is X?']);
    });

    it('streaming: the chunks reassemble through TrustGraph\'s deserialiser, and only the last message is final', async () => {
      harness = await startAgentHarness({ ...target, script: () => ['Thought: The capital', ' of France is Paris\nFinal', ' Answer: Par', 'is.'] });
      const result = await askAsGateway(rabbitmqUrl, harness, { question: 'What is the capital of France?', streaming: true });
      expectOneFinal(result);
      expect(contentOf(result, 'thought').trim()).toBe('The capital of France is Paris');
      expect(contentOf(result, 'answer').trim()).toBe('Paris.');
    });
  });
} else {
  describe('the agent on RabbitMQ', () => {
    it.skip(`skipped: ${inject('rabbitmqUnavailable')}`, () => undefined);
  });
}
