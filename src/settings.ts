/**
 * The service's own settings: command-line flags, environment variables and an optional YAML file,
 * validated once at start (zod) and frozen. TrustGraph's names and defaults are kept where they exist
 * (`--id agent-manager`, `PULSAR_HOST`, `-P/--metrics-port 8000`, `--max-iterations 10`, ...).
 *
 * Precedence: flag > environment variable > config file > default.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { CodedError, errorMessage } from './errors/index.js';
import { DEFAULT_AGGREGATION_TOPIC, DEFAULT_HEDGE, type OptionSpec, positiveInt } from './bus/index.js';
import { BACKENDS, backendNamed, type BackendName } from './backends.js';
import { DEFAULT_SERVICE_MAX_IN_FLIGHT, DEFAULT_STREAM_GAP_SECONDS, parseServiceTimeouts } from './flow/index.js';
import { groupedHelp } from './settings-help.js';

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** TrustGraph spells levels the Python way (`INFO`, `WARNING`, `CRITICAL`); accept both spellings. */
function normaliseLogLevel(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const lower = value.toLowerCase();
  if (lower === 'warning') return 'warn';
  if (lower === 'critical') return 'fatal';
  return lower;
}

const booleanish = z.preprocess((value) => {
  if (typeof value !== 'string') return value;
  const lower = value.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(lower)) return true;
  if (['0', 'false', 'no', 'off', ''].includes(lower)) return false;
  return value;
}, z.boolean());

/** TrustGraph's `--pubsub-backend` values: the backends of the table in backends.ts. */
export const PUBSUB_BACKENDS = BACKENDS.map((backend) => backend.name) as [BackendName, ...BackendName[]];

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
/** Every backend's option fields, one object (settings.test.ts checks that no two backends name the same one). */
const backendSettings = Object.assign({}, ...BACKENDS.map((backend) => backend.settings)) as UnionToIntersection<(typeof BACKENDS)[number]['settings']>;

export const SettingsSchema = z.object({
  id: z.string().min(1).default('agent-manager'),
  /** TrustGraph's pub/sub backend. */
  pubsubBackend: z.enum(PUBSUB_BACKENDS).default('pulsar'),
  ...backendSettings,
  concurrency: positiveInt(1, 10_000).default(1),
  maxIterations: positiveInt(1, 1_000).default(10),
  metrics: booleanish.default(true),
  metricsPort: positiveInt(0, 65_535).default(8000),
  /** Interface of the HTTP endpoints. TrustGraph's processors serve metrics on every interface (0.0.0.0). */
  httpHost: z.string().min(1).default('0.0.0.0'),
  /** Bearer token required by the tool listing (`/tools`); unset: the listing is open. */
  httpToken: z.string().min(16, 'must be at least 16 characters').optional(),
  logLevel: z.preprocess(normaliseLogLevel, z.enum(LOG_LEVELS)).default('info'),
  configRequestQueue: z.string().min(1).default('request:tg:config'),
  configResponseQueue: z.string().min(1).default('response:tg:config'),
  configPushQueue: z.string().min(1).default('notify:tg:config'),
  configTimeoutSeconds: z.coerce.number().positive().default(60),
  /** Per-message timeout for calls to TrustGraph services (prompt, graph RAG, MCP, ...). */
  requestTimeoutSeconds: z.coerce.number().positive().default(600),
  /** The prompt service's reply timeout (TrustGraph's `--prompt-timeout`). Unset: `requestTimeoutSeconds`. */
  promptTimeoutSeconds: z.coerce.number().positive().optional(),
  /** The wait for each reply of a stream after its first (service-timeouts.ts). */
  streamGapTimeoutSeconds: z.coerce.number().positive().default(DEFAULT_STREAM_GAP_SECONDS),
  /** Per-service waits, `prompt=900/30,graph-rag=120` (service-timeouts.ts). */
  serviceTimeouts: z
    .string()
    .transform((text, ctx) => {
      try {
        return parseServiceTimeouts(text);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: errorMessage(error) });
        return z.NEVER;
      }
    })
    .optional(),
  /** Hedged calls to read-only services (flow/service-hedging.ts): at most this share of a service's calls; 0 = off. */
  hedgeBudget: z.coerce.number().min(0).max(1).default(DEFAULT_HEDGE.budget),
  /** The hedge deadline: this quantile of the service's recent first-reply latencies … */
  hedgeQuantile: z.coerce.number().gt(0).max(1).default(DEFAULT_HEDGE.quantile),
  /** … times this, … */
  hedgeFactor: z.coerce.number().min(1).max(1000).default(DEFAULT_HEDGE.factor),
  /** … at least this many seconds … */
  hedgeFloorSeconds: z.coerce.number().positive().default(DEFAULT_HEDGE.floorMs / 1000),
  /** … and at most this many (also the deadline until the service has answered 20 calls). */
  hedgeCeilingSeconds: z.coerce.number().positive().default(DEFAULT_HEDGE.ceilingMs / 1000),
  /** Config type whose `additional-context` value is given to the model as context (TrustGraph's `--config-type`). */
  configType: z.string().min(1).default('agent'),
  /** Larger requests are refused with an error. Unset: three quarters of what the transport carries in one message. */
  maxRequestBytes: positiveInt(1, 2 ** 31).optional(),
  /** Per-save timeout of the agent's librarian documents (TrustGraph's `--librarian-timeout`). */
  librarianTimeoutSeconds: z.coerce.number().positive().default(120),
  /** Librarian document saves waiting for an answer at most; further documents are not saved. */
  librarianMaxInFlight: positiveInt(1, 100_000).default(64),
  /** Requests in flight to each service request topic at most; more wait in order for a slot. */
  serviceMaxInFlight: positiveInt(1, 100_000).default(DEFAULT_SERVICE_MAX_IN_FLIGHT),
  /** An action naming a tool that was not offered ends the dialog with an error (TrustGraph's behaviour). */
  strictTools: booleanish.default(false),
  /** Refuse requests whose state no tool of the workspace knows (else they are only counted). */
  strictStates: booleanish.default(false),
  /** HMAC key that signs every `next` message; unset: iterations are not signed or checked. */
  signingKey: z.string().min(16, 'must be at least 16 characters').optional(),
  /** The key before a rotation: still accepted when verifying, never used to sign. */
  signingKeyPrevious: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Seconds a signed `next` message stays valid; older ones are refused. */
  signingMaxAgeSeconds: z.coerce.number().positive().max(86_400).default(600),
  replayMemory: z.coerce.number().int().min(1_000).max(100_000_000).default(1_000_000),
  /** What happens to arguments the model adds beyond a tool's declared ones. */
  undeclaredArguments: z.enum(['drop', 'pass', 'reject']).default('drop'),
  /** Config type holding the per-workspace group policy. */
  policyConfigType: z.string().min(1).default('agent-group-policy'),
  /** Also publish each audit record to this TrustGraph queue id or Pulsar topic. */
  auditTopic: z.string().min(1).optional(),
  /** The supervisor's aggregation topic of each flow: `{tenant}`, `{namespace}`, `{topic}` of its request topic. */
  aggregationTopic: z
    .string()
    .startsWith('persistent://', 'must start with persistent:// (the messages held there unacknowledged are the fan-in state)')
    .default(DEFAULT_AGGREGATION_TOPIC),
  /** Seconds a supervisor's fan-out waits for all its subagents before its dialog ends with an error. */
  aggregationTimeoutSeconds: z.coerce.number().positive().max(86_400).default(300),
  /** Requests waiting for a concurrency slot beyond which new ones are refused with an error response. */
  maxQueued: positiveInt(1, 10_000_000).default(10_000),
  /** Bytes of requests waiting for a concurrency slot beyond which new ones are refused with an error response. */
  maxQueuedBytes: positiveInt(1, 2 ** 50).default(256 * 1024 * 1024),
  /** Consumers per flow on its Shared request subscription: each adds a flow-control window for bursts. */
  requestConsumers: positiveInt(1, 64).optional(),
  /** Publish each iteration's `next` request on the request queue, as TrustGraph's agent does, instead of keeping it. */
  nextOnBus: booleanish.default(false),
  /** Not ready while a probe message has waited this many seconds for the broker's acknowledgement. */
  brokerPingTimeoutSeconds: z.coerce.number().positive().max(3_600).default(5),
  /** Not ready while every concurrency slot has been held this many seconds. */
  slotsHeldSeconds: z.coerce.number().positive().default(120),
  /** Seconds to let in-flight iterations finish after SIGTERM/SIGINT. */
  shutdownGraceSeconds: z.coerce.number().nonnegative().default(30),
  /** Push logs to Loki as TrustGraph's processors do (labels `processor`, `severity`, `instance`). */
  lokiEnabled: booleanish.default(false),
  lokiUrl: z.string().regex(/^https?:\/\//, 'must start with http:// or https://').default('http://loki:3100/loki/api/v1/push'),
  lokiUsername: z.string().min(1).optional(),
  lokiPassword: z.string().min(1).optional(),
  /** Ask the MCP servers of config type `mcp` for their tools' input schemas (design decision 9 (docs/design.md)). */
  mcpDiscovery: booleanish.default(false),
  /** Seconds a server's tools/list answer is used before it is asked again. */
  mcpDiscoveryTtlSeconds: z.coerce.number().positive().max(86_400).default(300),
  /** Seconds one tools/list exchange (connect, initialize, list) may take. */
  mcpDiscoveryTimeoutSeconds: z.coerce.number().positive().max(600).default(10),
});

export type Settings = Readonly<z.infer<typeof SettingsSchema>>;

type SettingsKey = keyof z.infer<typeof SettingsSchema>;

/** Every option, for parsing and for `--help`: the service's own, each backend's after the backend choice. */
export const OPTIONS: readonly OptionSpec<SettingsKey>[] = [
  { key: 'id', flag: 'id', env: 'TG_AGENT_ID', help: 'processor id; names subscriptions and flows (default agent-manager)' },
  { key: 'pubsubBackend', flag: 'pubsub-backend', env: 'PUBSUB_BACKEND', help: `${PUBSUB_BACKENDS.join(' | ')} (default pulsar)` },
  ...BACKENDS.flatMap((backend): readonly OptionSpec<SettingsKey>[] => backend.options),
  { key: 'concurrency', flag: 'concurrency', env: 'TG_AGENT_CONCURRENCY', help: 'iterations processed at once (default 1)' },
  { key: 'maxIterations', flag: 'max-iterations', env: 'TG_AGENT_MAX_ITERATIONS', help: 'iteration limit per conversation (default 10)' },
  { key: 'metrics', flag: 'metrics', env: 'TG_AGENT_METRICS', boolean: true, help: 'serve /metrics (default on; --no-metrics); health endpoints are always served' },
  { key: 'metricsPort', flag: 'metrics-port', short: 'P', env: 'TG_AGENT_METRICS_PORT', help: 'HTTP port for /metrics, /healthz, /readyz, /tools (default 8000)' },
  { key: 'httpHost', flag: 'http-host', env: 'TG_AGENT_HTTP_HOST', help: 'interface of the HTTP endpoints (default 0.0.0.0, as TrustGraph\'s metrics server)' },
  { key: 'httpToken', flag: 'http-token', env: 'TG_AGENT_HTTP_TOKEN', secret: 'value', help: 'bearer token required by /tools (min 16 chars; prefer the environment variable)' },
  { key: 'logLevel', flag: 'log-level', short: 'l', env: 'LOG_LEVEL', help: 'trace|debug|info|warn|error|fatal (TrustGraph spellings accepted; default info)' },
  { key: 'configRequestQueue', flag: 'config-request-queue', env: 'TG_CONFIG_REQUEST_QUEUE', help: 'default request:tg:config' },
  { key: 'configResponseQueue', flag: 'config-response-queue', env: 'TG_CONFIG_RESPONSE_QUEUE', help: 'default response:tg:config' },
  { key: 'configPushQueue', flag: 'config-push-queue', env: 'TG_CONFIG_PUSH_QUEUE', help: 'default notify:tg:config' },
  { key: 'configTimeoutSeconds', flag: 'config-timeout', env: 'TG_CONFIG_TIMEOUT', help: 'seconds per config request (default 60)' },
  { key: 'requestTimeoutSeconds', flag: 'request-timeout', env: 'TG_AGENT_REQUEST_TIMEOUT', help: 'seconds to wait for each reply of a TrustGraph service (default 600)' },
  { key: 'promptTimeoutSeconds', flag: 'prompt-timeout', env: 'TG_AGENT_PROMPT_TIMEOUT', help: "seconds to wait for the prompt service's reply (default: --request-timeout)" },
  { key: 'streamGapTimeoutSeconds', flag: 'stream-gap-timeout', env: 'TG_AGENT_STREAM_GAP_TIMEOUT', help: 'seconds to wait for each further reply of a streamed answer once its first came (default 60)' },
  { key: 'serviceTimeouts', flag: 'service-timeouts', env: 'TG_AGENT_SERVICE_TIMEOUTS', help: 'per service: <service>=<first-reply s>[/<gap s>],... (services: prompt, graph-rag, mcp-tool, structured-query, embeddings, row-embeddings-query, tool-service)' },
  { key: 'hedgeBudget', flag: 'hedge-budget', env: 'TG_AGENT_HEDGE_BUDGET', help: "share of a read-only service's calls that may be sent once more when their first reply is overdue (default 0.1; 0 turns hedging off)" },
  { key: 'hedgeQuantile', flag: 'hedge-quantile', env: 'TG_AGENT_HEDGE_QUANTILE', help: "quantile of the service's recent first-reply latencies the hedge deadline follows (default 0.99)" },
  { key: 'hedgeFactor', flag: 'hedge-factor', env: 'TG_AGENT_HEDGE_FACTOR', help: 'the hedge deadline is that quantile times this (default 2)' },
  { key: 'hedgeFloorSeconds', flag: 'hedge-floor', env: 'TG_AGENT_HEDGE_FLOOR', help: 'shortest hedge deadline, seconds (default 2)' },
  { key: 'hedgeCeilingSeconds', flag: 'hedge-ceiling', env: 'TG_AGENT_HEDGE_CEILING', help: 'longest hedge deadline, seconds; also the deadline until the service has answered 20 calls (default 60)' },
  { key: 'configType', flag: 'config-type', env: 'TG_AGENT_CONFIG_TYPE', help: 'config type whose additional-context value is the model\'s context, as TrustGraph reads it (default agent)' },
  { key: 'maxRequestBytes', flag: 'max-request-bytes', env: 'TG_AGENT_MAX_REQUEST_BYTES', help: 'refuse larger requests with an error (default: 3/4 of what the transport carries: ~589 KB on websocket, ~3.9 MB on native)' },
  { key: 'librarianTimeoutSeconds', flag: 'librarian-timeout', env: 'TG_AGENT_LIBRARIAN_TIMEOUT', help: 'seconds to wait for the librarian to confirm a saved document (default 120)' },
  { key: 'librarianMaxInFlight', flag: 'librarian-max-in-flight', env: 'TG_AGENT_LIBRARIAN_MAX_IN_FLIGHT', help: 'document saves awaiting the librarian at most; more are skipped (default 64)' },
  {
    key: 'serviceMaxInFlight',
    flag: 'service-max-in-flight',
    env: 'TG_AGENT_SERVICE_MAX_IN_FLIGHT',
    help: `requests in flight to each TrustGraph service request queue at most; more wait in order, within their timeout (default ${DEFAULT_SERVICE_MAX_IN_FLIGHT})`,
  },
  { key: 'strictTools', flag: 'strict-tools', env: 'TG_AGENT_STRICT_TOOLS', boolean: true, help: 'a not-offered tool ends the dialog with an error, as TrustGraph does' },
  { key: 'strictStates', flag: 'strict-states', env: 'TG_AGENT_STRICT_STATES', boolean: true, help: 'refuse requests whose state no tool knows' },
  { key: 'signingKey', flag: 'signing-key', env: 'TG_AGENT_SIGNING_KEY', secret: 'value', help: 'HMAC key signing next messages (min 16 chars)' },
  { key: 'signingKeyPrevious', flag: 'signing-key-previous', env: 'TG_AGENT_SIGNING_KEY_PREVIOUS', secret: 'value', help: 'the key before a rotation: still accepted, never used to sign' },
  { key: 'signingMaxAgeSeconds', flag: 'signing-max-age', env: 'TG_AGENT_SIGNING_MAX_AGE', help: 'seconds a signed next message is accepted (default 600)' },
  { key: 'replayMemory', flag: 'replay-memory', env: 'TG_AGENT_REPLAY_MEMORY', help: 'signed next messages accepted within --signing-max-age that each replica remembers to refuse replays, about 60 bytes each (default 1000000)' },
  { key: 'undeclaredArguments', flag: 'undeclared-arguments', env: 'TG_AGENT_UNDECLARED_ARGUMENTS', help: 'drop | pass | reject arguments a tool does not declare (default drop)' },
  { key: 'policyConfigType', flag: 'policy-config-type', env: 'TG_AGENT_POLICY_CONFIG_TYPE', help: 'config type of the group policy (default agent-group-policy)' },
  { key: 'auditTopic', flag: 'audit-topic', env: 'TG_AGENT_AUDIT_TOPIC', help: 'also publish audit records to this queue' },
  { key: 'aggregationTopic', flag: 'aggregation-topic', env: 'TG_AGENT_AGGREGATION_TOPIC', help: 'persistent topic where supervisors collect their subagents, per flow; {tenant} {namespace} {topic} are those of the request topic (default persistent://{tenant}/{namespace}/{topic}-aggregation)' },
  { key: 'aggregationTimeoutSeconds', flag: 'aggregation-timeout', env: 'TG_AGENT_AGGREGATION_TIMEOUT', help: "seconds a supervisor waits for its subagents before its dialog ends with an error (default 300, TrustGraph's)" },
  { key: 'maxQueued', flag: 'max-queued', env: 'TG_AGENT_MAX_QUEUED', help: 'requests waiting for a slot beyond which new ones get an "overloaded" error response (default 10000)' },
  { key: 'maxQueuedBytes', flag: 'max-queued-bytes', env: 'TG_AGENT_MAX_QUEUED_BYTES', help: 'bytes of requests waiting for a slot beyond which a new one gets an "overloaded" error response (default 268435456: 256 MiB)' },
  { key: 'requestConsumers', flag: 'request-consumers', env: 'TG_AGENT_REQUEST_CONSUMERS', help: 'consumers per flow on its request subscription (default: as many as the transport needs for a 4000-message window: 4 on websocket, 1 on native)' },
  { key: 'nextOnBus', flag: 'next-on-bus', env: 'TG_AGENT_NEXT_ON_BUS', boolean: true, help: "publish each iteration's next request on the request queue for any replica to take, as TrustGraph's agent does (default off: the replica that ran the iteration runs the next one, so the broker cannot drop it)" },
  { key: 'brokerPingTimeoutSeconds', flag: 'broker-ping-timeout', env: 'TG_AGENT_BROKER_PING_TIMEOUT', help: 'seconds a probe message may wait for the broker before /readyz reports it unresponsive (default 5)' },
  { key: 'slotsHeldSeconds', flag: 'slots-held-timeout', env: 'TG_AGENT_SLOTS_HELD_TIMEOUT', help: 'seconds every concurrency slot may be held before /readyz reports the agent stuck (default 120)' },
  { key: 'shutdownGraceSeconds', flag: 'shutdown-grace', env: 'TG_AGENT_SHUTDOWN_GRACE', help: 'seconds to finish in-flight iterations on SIGTERM (default 30)' },
  { key: 'lokiEnabled', flag: 'loki-enabled', env: 'TG_AGENT_LOKI_ENABLED', boolean: true, help: 'push logs to Loki as TrustGraph does (default off; on with --loki-enabled or when LOKI_URL is set; --no-loki-enabled)' },
  { key: 'lokiUrl', flag: 'loki-url', env: 'LOKI_URL', secret: 'url', help: 'Loki push URL (default http://loki:3100/loki/api/v1/push)' },
  { key: 'lokiUsername', flag: 'loki-username', env: 'LOKI_USERNAME', help: 'Loki basic-auth user' },
  { key: 'lokiPassword', flag: 'loki-password', env: 'LOKI_PASSWORD', secret: 'value', help: 'Loki basic-auth password (prefer the environment variable)' },
  { key: 'mcpDiscovery', flag: 'mcp-discovery', env: 'TG_AGENT_MCP_DISCOVERY', boolean: true, help: "read MCP tools' input schemas from their servers (tools/list); default off" },
  { key: 'mcpDiscoveryTtlSeconds', flag: 'mcp-discovery-ttl', env: 'TG_AGENT_MCP_DISCOVERY_TTL', help: 'seconds a tools/list answer is used before asking again (default 300)' },
  { key: 'mcpDiscoveryTimeoutSeconds', flag: 'mcp-discovery-timeout', env: 'TG_AGENT_MCP_DISCOVERY_TIMEOUT', help: 'seconds one tools/list exchange may take (default 10)' },
];

/** A flag, environment variable or their combination is invalid; the message says which and why. */
export class SettingsError extends CodedError {
  override readonly name = 'SettingsError';
  readonly code = 'TG_SETTINGS_INVALID';
}

export function helpText(): string {
  return groupedHelp(OPTIONS);
}

export interface ParsedCommandLine {
  help: boolean;
  settings?: Settings;
}

/** Parse and validate; throws SettingsError naming every bad value and the accepted values. */
export function loadSettings(argv: string[], env: NodeJS.ProcessEnv): ParsedCommandLine {
  const parseOptions: Record<string, { type: 'string' | 'boolean'; short?: string }> = {
    help: { type: 'boolean', short: 'h' },
    'config-file': { type: 'string', short: 'c' },
  };
  for (const option of OPTIONS) {
    parseOptions[option.flag] = { type: option.boolean ? 'boolean' : 'string', ...(option.short ? { short: option.short } : {}) };
    if (option.boolean) parseOptions[`no-${option.flag}`] = { type: 'boolean' };
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: argv, options: parseOptions, strict: true, allowPositionals: false }));
  } catch (error) {
    throw new SettingsError(`${(error as Error).message}. Run with --help for the list of options.`);
  }
  if (values.help) return { help: true };

  const raw: Record<string, unknown> = {};
  const configFile = (values['config-file'] as string | undefined) ?? env.TG_AGENT_CONFIG_FILE;
  if (configFile) Object.assign(raw, readConfigFile(configFile));
  // Every environment variable first, then every flag: an option may have two names (--pulsar-admin-url is
  // TrustGraph's --broker-admin-url), and a flag of either name beats an environment variable of either.
  for (const option of OPTIONS) {
    const fromEnv = option.env ? env[option.env] : undefined;
    if (fromEnv !== undefined && fromEnv !== '') raw[option.key] = fromEnv;
  }
  // TrustGraph's processors push to Loki by default; outside a TrustGraph deployment there is no Loki, so here
  // it is on when asked for: --loki-enabled, or a LOKI_URL in the environment as TrustGraph's containers set it.
  if (raw.lokiEnabled === undefined && env.LOKI_URL) raw.lokiEnabled = true;
  for (const option of OPTIONS) {
    const fromFlag = values[option.flag];
    if (fromFlag !== undefined) raw[option.key] = fromFlag;
    if (option.boolean && values[`no-${option.flag}`]) raw[option.key] = false;
  }

  const result = SettingsSchema.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? '');
      const option = OPTIONS.find((o) => o.key === key);
      const name = option ? `--${option.flag}${option.env ? ` (${option.env})` : ''}` : key;
      return `${name}: ${issue.message}${option ? `; accepted: ${option.help}` : ''}`;
    });
    throw new SettingsError(`Invalid settings:\n  ${problems.join('\n  ')}`);
  }
  if (result.data.hedgeCeilingSeconds < result.data.hedgeFloorSeconds) {
    throw new SettingsError(
      `Invalid settings:\n  --hedge-ceiling (${result.data.hedgeCeilingSeconds}) must be at least --hedge-floor (${result.data.hedgeFloorSeconds})`,
    );
  }
  try {
    backendNamed(result.data.pubsubBackend).check?.(result.data);
  } catch (err) {
    throw new SettingsError(`Invalid settings:\n  ${errorMessage(err)}`, { cause: err });
  }
  return { help: false, settings: Object.freeze(result.data) };
}

function readConfigFile(path: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = parseYaml(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new SettingsError(`Cannot read config file ${path}: ${(error as Error).message}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new SettingsError(`Config file ${path} must hold a mapping of option names to values`);
  }
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(parsed as Record<string, unknown>)) {
    const option = OPTIONS.find((o) => o.key === name || o.flag === name);
    if (!option) throw new SettingsError(`Config file ${path}: unknown option "${name}". Run with --help for the list.`);
    out[option.key] = value;
  }
  return out;
}
