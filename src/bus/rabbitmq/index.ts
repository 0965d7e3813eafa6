/**
 * The RabbitMQ backend (`--pubsub-backend rabbitmq`): TrustGraph's RabbitMQ options and exchange and queue
 * layout (topology.ts), over amqplib (rabbitmq-transport.ts).
 */
import { z } from 'zod';
import { defineBackend, logTransportStart, positiveInt } from '../backend.js';
import { RabbitMqTransport } from './rabbitmq-transport.js';
import { rabbitMqUrl } from './topology.js';

export const rabbitmqBackend = defineBackend({
  name: 'rabbitmq',
  settings: {
    rabbitmqHost: z.string().min(1).default('rabbitmq'),
    rabbitmqPort: positiveInt(1, 65_535).default(5672),
    rabbitmqUsername: z.string().default('guest'),
    rabbitmqPassword: z.string().default('guest'),
    rabbitmqVhost: z.string().min(1).default('/'),
  },
  options: [
    { key: 'rabbitmqHost', flag: 'rabbitmq-host', env: 'RABBITMQ_HOST', help: 'RabbitMQ host, with --pubsub-backend rabbitmq (default rabbitmq)' },
    { key: 'rabbitmqPort', flag: 'rabbitmq-port', env: 'RABBITMQ_PORT', help: 'RabbitMQ AMQP port (default 5672)' },
    { key: 'rabbitmqUsername', flag: 'rabbitmq-username', env: 'RABBITMQ_USERNAME', help: 'RabbitMQ user (default guest)' },
    { key: 'rabbitmqPassword', flag: 'rabbitmq-password', env: 'RABBITMQ_PASSWORD', secret: 'value', help: 'RabbitMQ password (default guest)' },
    { key: 'rabbitmqVhost', flag: 'rabbitmq-vhost', env: 'RABBITMQ_VHOST', help: 'RabbitMQ virtual host (default /)' },
  ],
  async create(chosen, { logger }) {
    const url = rabbitMqUrl({
      host: chosen.rabbitmqHost,
      port: chosen.rabbitmqPort,
      username: chosen.rabbitmqUsername,
      password: chosen.rabbitmqPassword,
      vhost: chosen.rabbitmqVhost,
    });
    logTransportStart(logger, 'rabbitmq', url, 'chosen with --pubsub-backend rabbitmq');
    return new RabbitMqTransport({ url, logger });
  },
});
