#!/usr/bin/env node
/**
 * Composition root: settings → logger → transport → agent service → HTTP endpoints → signals.
 */
import { pino } from 'pino';
import { createTransport } from './bus/create-transport.js';
import { HttpServer } from './observability/http-server.js';
import { AgentService } from './service.js';
import { helpText, loadSettings, SettingsError, type Settings } from './settings.js';

async function main(): Promise<number> {
  let settings: Settings;
  try {
    const parsed = loadSettings(process.argv.slice(2), process.env);
    if (parsed.help || !parsed.settings) {
      console.log(helpText());
      return 0;
    }
    settings = parsed.settings;
  } catch (error) {
    if (error instanceof SettingsError) {
      console.error(error.message);
      return 2;
    }
    throw error;
  }

  const logger = pino({ level: settings.logLevel, base: { processor: settings.id } });
  const transport = await createTransport(settings, logger);
  const service = new AgentService(settings, transport, logger);
  const http = new HttpServer({ readiness: () => service.readiness() }, logger);
  if (settings.metrics) {
    const port = await http.listen(settings.metricsPort);
    logger.info({ port }, 'HTTP endpoints listening (/healthz, /readyz, /metrics, /tools)');
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'Stopping: no new requests; finishing in-flight iterations');
    await service.stop(settings.shutdownGraceSeconds * 1000);
    await transport.close();
    await http.close();
    logger.info('Stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  await service.start();
  logger.info(service.readiness(), 'Agent service started');
  return -1;
}

main().then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
