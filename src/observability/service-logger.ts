/**
 * The service's logger: JSON lines on stdout, and, with Loki on, the same lines pushed to Loki the way
 * TrustGraph's processors push theirs, so that one Grafana query finds every service's logs. TrustGraph labels
 * each stream `processor` (the processor id), `severity` (debug, info, warning, error, critical) and
 * `instance` (8 hex digits per process); so do we. The pushing is pino-loki's, in a worker thread: batches
 * every second, at most LOKI_BUFFER_LINES waiting (the oldest go first), a batch that Loki does not take is
 * dropped. Whether Loki takes them is watched here (loki-reachability.ts): one warning when it does not,
 * one line when it does again; the service itself never waits for Loki.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { pino, type DestinationStream, type Logger } from 'pino';
import { maskSecrets, redactUrl, withoutCredentials, type BasicAuth } from '../errors/secret-text.js';
import { LokiReachability } from './loki-reachability.js';

/** Lines waiting for Loki at most; more push out the oldest. */
export const LOKI_BUFFER_LINES = 2000;

/** pino's level numbers → TrustGraph's `severity` label values. */
const SEVERITY: Readonly<Record<number, string>> = { 10: 'debug', 20: 'debug', 30: 'info', 40: 'warning', 50: 'error', 60: 'critical' };

/** The settings the logger reads (the service's `--id`, `--log-level` and `--loki-*` options). */
export interface LoggerSettings {
  readonly id: string;
  readonly logLevel: string;
  readonly lokiEnabled: boolean;
  readonly lokiUrl: string;
  readonly lokiUsername?: string | undefined;
  readonly lokiPassword?: string | undefined;
  /** Values no log line may show (settings-secrets.ts): masked in every line, whatever field carries them. */
  readonly secrets?: readonly string[];
}

export interface ServiceLogger {
  readonly logger: Logger;
  /** With Loki on: whether it takes our lines. */
  readonly loki: LokiReachability | undefined;
  /** Push what is still buffered to Loki (bounded wait) and stop watching it. */
  close(): Promise<void>;
}

export function createServiceLogger(settings: LoggerSettings): ServiceLogger {
  const base = { processor: settings.id };
  const secrets = settings.secrets ?? [];
  // The one place every line passes, on its way to stdout and to Loki alike.
  const hooks = secrets.length > 0 ? { streamWrite: (line: string) => maskSecrets(line, secrets) } : {};
  if (!settings.lokiEnabled) {
    return { logger: pino({ level: settings.logLevel, base, hooks }), loki: undefined, close: async () => undefined };
  }
  const { url, basicAuth } = lokiTarget(settings);
  const labels = { processor: settings.id, instance: randomUUID().slice(0, 8) };
  const pushed = pino.transport({
    target: 'pino-loki',
    options: {
      // --loki-url is the whole push URL, as TrustGraph takes it (its query kept; its user-info sent as basic auth).
      host: url,
      endpoint: '',
      labels,
      propsToLabels: ['severity'],
      ...(basicAuth ? { basicAuth } : {}),
      batching: { interval: 1, maxBufferSize: LOKI_BUFFER_LINES },
      timeout: 5000,
      // Failures are reported once by LokiReachability, not once per batch.
      silenceErrors: true,
    },
  }) as DestinationStream & NodeJS.EventEmitter & { end(): void };
  const logger = pino(
    {
      level: settings.logLevel,
      base,
      hooks,
      // The `severity` label of the line (TrustGraph's name); it also shows on stdout.
      mixin: (_object, level) => ({ severity: SEVERITY[level] ?? 'info' }),
    },
    pino.multistream([
      { level: settings.logLevel, stream: pino.destination({ dest: 1, sync: true }) },
      { level: settings.logLevel, stream: pushed },
    ]),
  );
  const shown = redactUrl(settings.lokiUrl);
  const loki = new LokiReachability({ url, shownUrl: shown, ...(basicAuth ? { basicAuth } : {}), logger: logger.child({ component: 'loki' }) });
  loki.start();
  logger.info({ url: shown, labels, basicAuth: basicAuth !== undefined }, `Loki logging enabled: ${shown}`);
  return {
    logger,
    loki,
    async close() {
      loki.stop();
      const closed = once(pushed, 'close');
      pushed.end();
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 3000).unref())]);
    },
  };
}

/**
 * Where to push and with which credentials: `--loki-username` and `--loki-password` when both are given, else the
 * user-info of `--loki-url` (`http://user:password@host/…`), which fetch would refuse to send in the URL.
 */
function lokiTarget(settings: LoggerSettings): { url: string; basicAuth?: BasicAuth } {
  const { url, basicAuth } = withoutCredentials(settings.lokiUrl);
  if (settings.lokiUsername && settings.lokiPassword) return { url, basicAuth: { username: settings.lokiUsername, password: settings.lokiPassword } };
  return basicAuth ? { url, basicAuth } : { url };
}
