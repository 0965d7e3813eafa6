/**
 * vitest `globalSetup` of the `integration` project: one real RabbitMQ broker per test run (dev/rabbitmq-broker.ts:
 * `RABBITMQ_URL`, or Debian's `rabbitmq-server` started for the run and stopped after it).
 *
 * Tests read `inject('rabbitmqUrl')`; where no RabbitMQ can run, it is empty and `inject('rabbitmqUnavailable')` says
 * why (their suites are then listed as skipped with that reason). Under CI=true a missing RabbitMQ fails the run.
 */
import type { TestProject } from 'vitest/node';
import { rabbitMqUnavailable, startRabbitMq } from '../../dev/rabbitmq-broker.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `amqp://guest:guest@127.0.0.1:<port>/%2F`, or '' when no RabbitMQ runs here. */
    rabbitmqUrl: string;
    /** Why no RabbitMQ runs here ('' when one does). */
    rabbitmqUnavailable: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const missing = rabbitMqUnavailable();
  if (missing) {
    if (process.env.CI === 'true') throw new Error(`CI=true needs RabbitMQ for the rabbitmq backend tests: ${missing}`);
    console.log(`[global-rabbitmq] not started: ${missing}`);
    project.provide('rabbitmqUrl', '');
    project.provide('rabbitmqUnavailable', missing);
    return async () => undefined;
  }
  const startedAt = Date.now();
  const broker = await startRabbitMq();
  console.log(`[global-rabbitmq] ${broker.description} ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
  project.provide('rabbitmqUrl', broker.url);
  project.provide('rabbitmqUnavailable', '');
  return () => broker.stop();
}
