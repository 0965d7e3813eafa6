/**
 * Where the stack `npm run local` started runs: the file it writes once the agent is ready and removes when it
 * stops (`.pulsar/local.json` in the checkout, or in `TG_AGENT_LOCAL_DIR`), read by `npm run ask` and by
 * `tg-agent lint` without `--file`, so both reach that broker without being told.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface LocalStack {
  readonly backend?: 'pulsar' | 'kafka' | 'rabbitmq';
  readonly webSocketUrl?: string;
  readonly serviceUrl?: string;
  readonly transport?: string;
  readonly rabbitmqUrl?: string;
  readonly kafkaBootstrapServers?: string;
  readonly metricsUrl?: string;
  readonly workspace?: string;
  readonly flow?: string;
  /** The process id of `npm run local`: only that process removes the file. */
  readonly pid?: number;
}

/** The checkout: the nearest directory above this module with a package.json (src/ under tsx, dist/src/ when built). */
function checkoutRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

/** The directory of the state file and the agent's log: `TG_AGENT_LOCAL_DIR`, else `.pulsar` in the checkout. */
export function localStackDir(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.TG_AGENT_LOCAL_DIR;
  return configured !== undefined && configured !== '' ? configured : join(checkoutRoot(), '.pulsar');
}

export const localStackFile = (env: NodeJS.ProcessEnv = process.env): string => join(localStackDir(env), 'local.json');

/** The stack `npm run local` recorded, or undefined when none runs (no file, or one that cannot be read). */
export function readLocalStack(env: NodeJS.ProcessEnv = process.env): LocalStack | undefined {
  const file = localStackFile(env);
  if (!existsSync(file)) return undefined;
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as LocalStack) : undefined;
  } catch {
    return undefined;
  }
}

/** The agent options that reach the recorded stack's broker (what `npm run local` gave its own agent). */
export function localStackArgs(stack: LocalStack): string[] {
  if (stack.backend === 'rabbitmq' && stack.rabbitmqUrl) return rabbitMqArgs(stack.rabbitmqUrl);
  if (stack.backend === 'kafka' && stack.kafkaBootstrapServers) return ['--pubsub-backend', 'kafka', '--kafka-bootstrap-servers', stack.kafkaBootstrapServers];
  const args: string[] = [];
  if (stack.transport) args.push('--transport', stack.transport);
  if (stack.serviceUrl) args.push('--pulsar-host', stack.serviceUrl);
  if (stack.webSocketUrl) args.push('--pulsar-ws-url', stack.webSocketUrl);
  return args;
}

/** The agent's command-line options for the RabbitMQ at `url` (`amqp://user:password@host:port/vhost`). */
export function rabbitMqArgs(url: string): string[] {
  const parsed = new URL(url);
  return [
    '--pubsub-backend', 'rabbitmq',
    '--rabbitmq-host', parsed.hostname,
    '--rabbitmq-port', parsed.port || '5672',
    '--rabbitmq-username', decodeURIComponent(parsed.username),
    '--rabbitmq-password', decodeURIComponent(parsed.password),
    '--rabbitmq-vhost', decodeURIComponent(parsed.pathname.slice(1)) || '/',
  ];
}
