/**
 * How long the agent waits for each TrustGraph service: for its first reply, and, where the reply is streamed
 * (the prompt service's tokens, graph RAG's explain messages, a tool service's chunks), for each further one.
 * The two differ because a model may think for minutes before its first token, while a stream that has started
 * and then falls silent for a minute has lost a message: waiting the whole first-reply timeout again (600 s by
 * default, TrustGraph's) leaves a user's conversation hanging for ten minutes.
 *
 *   --request-timeout 600               the first reply of every service (TrustGraph's)
 *   --prompt-timeout 300                the prompt service's first reply (TrustGraph's)
 *   --stream-gap-timeout 60             each further reply of a stream, every service
 *   --service-timeouts "graph-rag=120,mcp-tool=300/30,prompt=900"
 *                                       per service: the first reply's seconds, and after a "/" the gap's
 */
import { ServiceTimeoutsError } from './errors.js';

/** The services the agent calls, by TrustGraph's names (the flow's queues); `tool-service` is every configured tool service. */
export const TIMED_SERVICES = ['prompt', 'graph-rag', 'mcp-tool', 'structured-query', 'embeddings', 'row-embeddings-query', 'tool-service'] as const;
export type TimedService = (typeof TIMED_SERVICES)[number];

/** Seconds from `--service-timeouts`, per service; either part may be missing. */
export type ServiceTimeoutOverrides = Partial<Record<TimedService, { readonly firstSeconds?: number; readonly gapSeconds?: number }>>;

export interface ReplyTimeouts {
  /** The wait for the first reply. */
  readonly firstMs: number;
  /** The wait for each further reply of a stream. */
  readonly gapMs: number;
}

export interface ServiceTimeoutSettings {
  readonly requestTimeoutSeconds: number;
  readonly promptTimeoutSeconds?: number | undefined;
  readonly streamGapTimeoutSeconds?: number | undefined;
  readonly serviceTimeouts?: ServiceTimeoutOverrides | undefined;
}

/** Default wait between two replies of a stream, in seconds. */
export const DEFAULT_STREAM_GAP_SECONDS = 60;

const isTimedService = (name: string): name is TimedService => (TIMED_SERVICES as readonly string[]).includes(name);

function seconds(text: string, what: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0) throw new ServiceTimeoutsError(`${what} must be a number of seconds greater than 0, got "${text}"`);
  return value;
}

/** `"graph-rag=120,mcp-tool=300/30"` → overrides; throws a ServiceTimeoutsError naming the part that is wrong. */
export function parseServiceTimeouts(text: string): ServiceTimeoutOverrides {
  const overrides: ServiceTimeoutOverrides = {};
  for (const part of text.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const match = /^([a-z-]+)=([^/]*)(?:\/(.*))?$/.exec(part);
    if (!match) throw new ServiceTimeoutsError(`"${part}" is not <service>=<seconds>[/<gap seconds>]`);
    const [, service, first, gap] = match as unknown as [string, string, string, string | undefined];
    if (!isTimedService(service)) throw new ServiceTimeoutsError(`unknown service "${service}" in "${part}" (services: ${TIMED_SERVICES.join(', ')})`);
    if (overrides[service]) throw new ServiceTimeoutsError(`service "${service}" is given twice`);
    overrides[service] = {
      ...(first === '' ? {} : { firstSeconds: seconds(first, `${service}'s first-reply timeout`) }),
      ...(gap === undefined ? {} : { gapSeconds: seconds(gap, `${service}'s gap timeout`) }),
    };
  }
  return overrides;
}

/**
 * The waits for `service`: its own override, else `--prompt-timeout` (prompt only) or `--request-timeout`, and
 * `--stream-gap-timeout`. A service that takes no override (the librarian) gets the defaults.
 */
export function replyTimeouts(settings: ServiceTimeoutSettings, service: string): ReplyTimeouts {
  const own = isTimedService(service) ? settings.serviceTimeouts?.[service] : undefined;
  const firstSeconds =
    own?.firstSeconds ?? (service === 'prompt' ? settings.promptTimeoutSeconds : undefined) ?? settings.requestTimeoutSeconds;
  const gapSeconds = own?.gapSeconds ?? settings.streamGapTimeoutSeconds ?? DEFAULT_STREAM_GAP_SECONDS;
  return { firstMs: firstSeconds * 1000, gapMs: gapSeconds * 1000 };
}
