/**
 * The agent on TrustGraph's RabbitMQ backend (`--pubsub-backend rabbitmq`), against the run's real RabbitMQ
 * (test/support/global-brokers.ts), with TrustGraph's own RabbitMQ backend code (aio-pika) on the other side:
 * test/support/backend-suites.ts.
 */
import { describe, inject, it } from 'vitest';
import { RabbitMqTransport } from '../../src/bus/rabbitmq/rabbitmq-transport.js';
import { backendSuites } from '../support/backend-suites.js';

const rabbitmqUrl = inject('rabbitmqUrl');

if (rabbitmqUrl) {
  const url = new URL(rabbitmqUrl);
  backendSuites({
    name: 'RabbitMQ',
    target: { transport: 'rabbitmq', rabbitmqUrl },
    connect: () => new RabbitMqTransport({ url: rabbitmqUrl }),
    gatewayUrl: rabbitmqUrl,
    trustgraphArgs: ['--pubsub-backend', 'rabbitmq', '--rabbitmq-host', url.hostname, '--rabbitmq-port', url.port],
    shares: "the flow's named queue hands its messages round the consumers that have credit",
  });
} else {
  describe('the agent on RabbitMQ', () => {
    it.skip(`skipped: ${inject('rabbitmqUnavailable')}`, () => undefined);
  });
}
