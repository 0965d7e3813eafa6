/**
 * The agent on TrustGraph's RabbitMQ backend (`--pubsub-backend rabbitmq`), against the run's real RabbitMQ
 * (test/support/global-rabbitmq.ts): the behaviour suites that run in memory and on Pulsar, here with the agent,
 * its stand-ins and the gateway all on RabbitMQ exchanges and queues named as TrustGraph names them.
 */
import { describe, inject, it } from 'vitest';
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
} else {
  describe('the agent on RabbitMQ', () => {
    it.skip(`skipped: ${inject('rabbitmqUnavailable')}`, () => undefined);
  });
}
