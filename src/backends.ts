/**
 * The message backends this agent speaks, one line each (design decision 12 (docs/design.md)): `--pubsub-backend`
 * takes their names, the settings (settings.ts) their options, and the transport chooser (create-transport.ts)
 * their transports. A new backend is a folder under src/bus exporting one descriptor (src/bus/backend.ts) and
 * one line here. TrustGraph's default, Pulsar, comes first.
 */
import { BackendOptionsError } from './bus/index.js';
import { kafkaBackend } from './bus/kafka/index.js';
import { pulsarBackend } from './bus/pulsar/index.js';
import { rabbitmqBackend } from './bus/rabbitmq/index.js';

export const BACKENDS = [pulsarBackend, kafkaBackend, rabbitmqBackend] as const;

export type BackendName = (typeof BACKENDS)[number]['name'];

/** The backend of this name (the settings allow only the names above). */
export function backendNamed(name: BackendName): (typeof BACKENDS)[number] {
  const backend = BACKENDS.find((candidate) => candidate.name === name);
  if (backend === undefined) throw new BackendOptionsError(`--pubsub-backend ${name}: expected ${BACKENDS.map((b) => b.name).join(' | ')}`);
  return backend;
}
