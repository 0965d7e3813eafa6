/**
 * The transport of the backend the settings choose (`--pubsub-backend`, from the table in backends.ts). Each
 * backend's descriptor creates it; Pulsar's chooses between its native and WebSocket transports
 * (`--transport`, src/bus/pulsar/index.ts).
 */
import type { Logger } from 'pino';
import { backendNamed } from './backends.js';
import type { Transport } from './bus/index.js';
import type { Settings } from './settings.js';

export async function createTransport(settings: Settings, logger: Logger): Promise<Transport> {
  return backendNamed(settings.pubsubBackend).create(settings, { logger });
}
