/** The transports of a harness: the stand-ins' (and gateway's) and the agent's own, on the broker or in memory. */
import type { Logger } from 'pino';
import { MemoryTransport } from '../../../src/bus/memory/memory-transport.js';
import { KafkaTransport } from '../../../src/bus/kafka/kafka-transport.js';
import { RabbitMqTransport } from '../../../src/bus/rabbitmq/rabbitmq-transport.js';
import { kafkaBrokers } from '../../../src/bus/kafka/topology.js';
import { TEST_RABBITMQ_MAX_MESSAGE_BYTES } from '../../../dev/rabbitmq-broker.js';
import type { Transport } from '../../../src/bus/transport.js';
import { brokerUrls } from '../transport-contract.js';
import { createTestTransport } from '../transports.js';
import { topicClientsReader } from '../../../src/bus/pulsar/topic-clients.js';
import type { AgentHarnessOptions, HarnessTransport } from './harness-types.js';

/** The stand-ins' and the agent's transports of a `kind`; in memory both are one bus. */
export function harnessTransports(kind: HarnessTransport, options: AgentHarnessOptions, logger: Logger): { standIns: Transport; agent: Transport } {
  if (kind === 'memory') {
    const bus = new MemoryTransport({ logger: logger.child({ side: 'memory-bus' }) });
    return { standIns: bus, agent: bus };
  }
  if (kind === 'rabbitmq') {
    if (!options.rabbitmqUrl) throw new Error('the rabbitmq harness needs rabbitmqUrl');
    const url = options.rabbitmqUrl;
    return {
      standIns: new RabbitMqTransport({ url, logger: logger.child({ side: 'stand-ins' }), maxMessageBytes: TEST_RABBITMQ_MAX_MESSAGE_BYTES }),
      agent: new RabbitMqTransport({ url, logger: logger.child({ side: 'agent' }), maxMessageBytes: TEST_RABBITMQ_MAX_MESSAGE_BYTES }),
    };
  }
  if (kind === 'kafka') {
    if (!options.kafkaBootstrapServers) throw new Error('the kafka harness needs kafkaBootstrapServers');
    const brokers = kafkaBrokers(options.kafkaBootstrapServers);
    return {
      standIns: new KafkaTransport({ brokers, clientId: 'stand-ins', logger: logger.child({ side: 'stand-ins' }) }),
      agent: new KafkaTransport({ brokers, logger: logger.child({ side: 'agent' }) }),
    };
  }
  if (kind === 'websocket' && !options.webSocketUrl) throw new Error('the websocket harness needs webSocketUrl');
  const webSocketUrl = options.webSocketUrl ?? '';
  const serviceUrl = options.serviceUrl ?? (kind === 'native' ? brokerUrls().serviceUrl : '');
  const make = (side: string, webSocket: AgentHarnessOptions['transportOptions'], native: AgentHarnessOptions['nativeTransportOptions']) =>
    createTestTransport(kind, {
      webSocketUrl,
      serviceUrl,
      logger: logger.child({ side }),
      ...(webSocket ? { webSocket } : {}),
      ...(native ? { native } : {}),
    });
  return {
    standIns: make('stand-ins', options.transportOptions, options.nativeTransportOptions),
    // As the app makes it (src/bus/pulsar/index.ts): the agent's WebSocket consumers read at the broker's admin API.
    agent: make('agent', { topicClients: topicClientsReader({ adminUrl: options.brokerAdminUrl ?? webSocketUrl.replace(/^ws/, 'http') }), ...options.agentTransportOptions }, options.agentNativeTransportOptions),
  };
}
