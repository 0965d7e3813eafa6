#!/usr/bin/env node
/**
 * The process: settings → logger → transport → agent app → signals. SIGTERM/SIGINT stop taking requests,
 * let in-flight iterations finish (bounded by --shutdown-grace), close everything and exit 0.
 */
import { createServiceLogger } from './observability/service-logger.js';
import { runLintCommand } from './lint-command.js';
import { createAgentApp } from './app.js';
import { createTransport } from './create-transport.js';
import { TransportError } from './bus/errors.js';
import { helpText, loadSettings, SettingsError, type Settings } from './settings.js';
import { settingsSecrets } from './settings-secrets.js';

async function main(): Promise<void> {
  if (process.argv[2] === 'lint') process.exit(await runLintCommand(process.argv.slice(3), process.env));
  let settings: Settings;
  try {
    const parsed = loadSettings(process.argv.slice(2), process.env);
    if (parsed.help || !parsed.settings) {
      console.log(helpText());
      process.exit(0);
    }
    settings = parsed.settings;
  } catch (error) {
    if (error instanceof SettingsError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }

  const logs = createServiceLogger({ ...settings, secrets: settingsSecrets(settings) });
  const { logger } = logs;
  const transport = await createTransport(settings, logger);
  const app = await createAgentApp(settings, transport, logger);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'Stopping: no new requests; finishing in-flight iterations');
    await app.stop();
    await transport.close();
    logger.info('Stopped');
    await logs.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  let port: number;
  try {
    port = await app.start();
  } catch (error) {
    // SIGTERM while waiting for the broker ends the wait with its latest failure: the stop is under way.
    if (stopping) return;
    throw error;
  }
  if (stopping) return;
  logger.info({ ...app.service.readiness(), httpPort: port }, 'Agent service started');
}

main().catch((error: unknown) => {
  // A refused configuration (credentials, a transport that cannot load) needs its message, not a stack.
  if (error instanceof TransportError && !error.retriable) {
    console.error(`tg-agent: cannot start: ${error.message}`);
    process.exit(1);
  }
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
