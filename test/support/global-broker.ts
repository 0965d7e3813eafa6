/**
 * vitest `globalSetup` of the `integration` project: one real Pulsar broker per test run.
 *
 * Tests read the URLs with `inject`:
 *   import { inject } from 'vitest';
 *   const ws = inject('pulsarWebSocketUrl');     // ws://127.0.0.1:8080      (append /ws/v2/...)
 *   const web = inject('pulsarWebServiceUrl');   // http://127.0.0.1:8080    (admin REST API)
 *   const bin = inject('pulsarServiceUrl');      // pulsar://127.0.0.1:6650  (binary protocol)
 *
 * See ./broker.ts for where the broker comes from (PULSAR_URL, Docker, or tools/pulsar-standalone/pulsar.sh).
 */
import type { TestProject } from 'vitest/node';
import { startBroker } from '../../dev/broker.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** WebSocket API base URL of the test broker, e.g. `ws://127.0.0.1:8080`. */
    pulsarWebSocketUrl: string;
    /** Binary protocol URL of the test broker, e.g. `pulsar://127.0.0.1:6650`. */
    pulsarServiceUrl: string;
    /** Admin REST / web service URL of the test broker, e.g. `http://127.0.0.1:8080`. */
    pulsarWebServiceUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const startedAt = Date.now();
  const broker = await startBroker();
  console.log(
    `[global-broker] ${broker.description} ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s: ` +
      `${broker.webSocketUrl} ${broker.serviceUrl}`,
  );
  project.provide('pulsarWebSocketUrl', broker.webSocketUrl);
  project.provide('pulsarServiceUrl', broker.serviceUrl);
  project.provide('pulsarWebServiceUrl', broker.webServiceUrl);
  return async () => {
    await broker.stop();
  };
}
