/**
 * vitest `globalSetup` of the `integration` project: one real RabbitMQ broker and one real Kafka broker per
 * test run, started side by side (dev/rabbitmq-broker.ts: `RABBITMQ_URL`, or Debian's `rabbitmq-server`;
 * dev/kafka-broker.ts: `KAFKA_BOOTSTRAP_SERVERS`, or one KRaft node from Maven Central jars), each stopped after
 * the run by this process, which started it. (The Pulsar broker has a setup of its own: global-broker.ts.)
 *
 * Tests read `inject('rabbitmqUrl')` and `inject('kafkaBootstrapServers')`; where a broker cannot run, its value
 * is empty and `inject('rabbitmqUnavailable')` / `inject('kafkaUnavailable')` say why (the suites are then listed
 * as skipped with that reason). Under CI=true a missing broker fails the run.
 */
import type { TestProject } from 'vitest/node';
import { kafkaUnavailable, startKafka } from '../../dev/kafka-broker.js';
import { rabbitMqUnavailable, startRabbitMq } from '../../dev/rabbitmq-broker.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `amqp://guest:guest@127.0.0.1:<port>/%2F`, or '' when no RabbitMQ runs here. */
    rabbitmqUrl: string;
    /** Why no RabbitMQ runs here ('' when one does). */
    rabbitmqUnavailable: string;
    /** `127.0.0.1:<port>`, or '' when no Kafka runs here. */
    kafkaBootstrapServers: string;
    /** Why no Kafka runs here ('' when one does). */
    kafkaUnavailable: string;
  }
}

interface Broker {
  name: string;
  missing: string | undefined;
  start(): Promise<{ address: string; description: string; stop(): Promise<void> }>;
  provide(address: string, unavailable: string): void;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const brokers: Broker[] = [
    {
      name: 'rabbitmq',
      missing: rabbitMqUnavailable(),
      start: async () => {
        const broker = await startRabbitMq();
        return { address: broker.url, description: broker.description, stop: () => broker.stop() };
      },
      provide: (address, unavailable) => {
        project.provide('rabbitmqUrl', address);
        project.provide('rabbitmqUnavailable', unavailable);
      },
    },
    {
      name: 'kafka',
      missing: kafkaUnavailable(),
      start: async () => {
        const broker = await startKafka();
        return { address: broker.bootstrapServers, description: broker.description, stop: () => broker.stop() };
      },
      provide: (address, unavailable) => {
        project.provide('kafkaBootstrapServers', address);
        project.provide('kafkaUnavailable', unavailable);
      },
    },
  ];
  const started = await Promise.allSettled(brokers.map((broker) => startOne(broker)));
  const stops = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failed = started.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) {
    await Promise.allSettled(stops.map((stop) => stop()));
    throw failed.reason;
  }
  return async () => {
    await Promise.allSettled(stops.map((stop) => stop()));
  };
}

async function startOne(broker: Broker): Promise<() => Promise<void>> {
  if (broker.missing) {
    if (process.env.CI === 'true') throw new Error(`CI=true needs ${broker.name} for the ${broker.name} backend tests: ${broker.missing}`);
    console.log(`[global-brokers] ${broker.name} not started: ${broker.missing}`);
    broker.provide('', broker.missing);
    return async () => undefined;
  }
  const startedAt = Date.now();
  const running = await broker.start();
  console.log(`[global-brokers] ${running.description} ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
  broker.provide(running.address, '');
  return () => running.stop();
}
