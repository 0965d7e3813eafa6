/**
 * Tamper-evident iterations. With a signing key, every `next` message carries an HMAC-SHA256 in the message
 * property `tg-agent-signature` and the time it was signed (milliseconds since the epoch) in
 * `tg-agent-signed-at`. The HMAC covers a canonical encoding of the whole AgentRequest (question, state,
 * group, history with every step field, collection, streaming, session id, ...), the workspace, the flow,
 * the `id` property and the signing time. An iteration that arrives with history but without a valid
 * signature was not written by an agent holding the key: someone edited a running conversation, moved it
 * to another flow, or wrote one from outside.
 *
 * A genuine `next` can still be captured and sent again unchanged. Two bounds: a signature older than
 * `maxAgeMs` is refused (`stale`), and each replica remembers the signatures it accepted within that window
 * and refuses a second one (`replayed`). Replicas share nothing, so a replay reaching another replica of
 * the same subscription inside the window is not caught (see the README's threat model).
 *
 * Only agents holding the key can continue signed conversations: in a mixed fleet with TrustGraph's
 * Python agent, leave signing off.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AgentRequest } from '../wire/index.js';
import { SeenSignatures } from './seen-signatures.js';

export const SIGNATURE_PROPERTY = 'tg-agent-signature';
export const SIGNED_AT_PROPERTY = 'tg-agent-signed-at';

/** Default of `--signing-max-age`, in seconds. */
export const DEFAULT_SIGNING_MAX_AGE_SECONDS = 600;
/** How far in the future a signing time may lie (clocks of replicas differ a little). */
const CLOCK_SKEW_MS = 30_000;
/** Version tag of the signed content: signatures of another layout never verify. */
const LAYOUT = 'tg-agent-iteration/2';
/**
 * The layout of the supervisor's aggregation messages, with their kind inside: a signature of one never verifies
 * as a `next` (a held fan-out record replayed onto the request topic), nor as an aggregation message of
 * another kind (a genuine fan-out re-labelled as a cancel).
 */
const AGGREGATION_LAYOUT = 'tg-agent-aggregation/1';

/** Where an iteration travels: part of what is signed, so a `next` cannot be moved to another flow. */
export interface IterationRoute {
  readonly workspace: string;
  readonly flow: string;
  /** The message's `id` property. */
  readonly id: string;
  /** Absent: a message of the request topic. Set: a message of the aggregation topic, of this kind. */
  readonly aggregation?: 'fan-out' | 'completion' | 'cancel';
}

export type Verdict = 'ok' | 'missing' | 'bad' | 'stale' | 'replayed';

/**
 * A value with every object's keys sorted, as nested `[key, value]` lists, so equal requests encode equally
 * whatever order their fields were written in.
 */
function canonicalValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonicalValue);
  if (value !== null && typeof value === 'object') {
    return Object.keys(value)
      .sort()
      .map((key) => [key, canonicalValue((value as Record<string, unknown>)[key])]);
  }
  return value;
}

/** The signed content. */
export function canonicalIteration(route: IterationRoute, request: AgentRequest, signedAt: string): string {
  const layout = route.aggregation === undefined ? [LAYOUT] : [AGGREGATION_LAYOUT, route.aggregation];
  return JSON.stringify([...layout, route.workspace, route.flow, route.id, signedAt, canonicalValue(request)]);
}

export interface IterationSignerOptions {
  /** The key before a rotation: still accepted when verifying, never used to sign. */
  previousKey?: string;
  /** Signatures older than this are refused. Default 600 s. */
  maxAgeMs?: number;
  /** Signatures remembered per replica to refuse replays (oldest dropped first). Default 100 000. */
  replayCacheSize?: number;
  now?: () => number;
}

/**
 * Signs with `key`; verifies against `key` and, during a rotation, `previousKey` too, so conversations
 * signed before the rotation (or by replicas not yet rolled) continue.
 */
export class IterationSigner {
  readonly maxAgeMs: number;
  private readonly keys: readonly string[];
  private readonly seen: SeenSignatures;
  private readonly now: () => number;

  constructor(
    private readonly key: string,
    options: IterationSignerOptions = {},
  ) {
    this.keys = options.previousKey ? [key, options.previousKey] : [key];
    this.maxAgeMs = options.maxAgeMs ?? DEFAULT_SIGNING_MAX_AGE_SECONDS * 1000;
    this.seen = new SeenSignatures(options.replayCacheSize ?? 100_000);
    this.now = options.now ?? Date.now;
  }

  /** The properties to put on a `next` message. */
  sign(route: IterationRoute, request: AgentRequest): Record<string, string> {
    const signedAt = String(this.now());
    return { [SIGNATURE_PROPERTY]: hmac(this.key, route, request, signedAt), [SIGNED_AT_PROPERTY]: signedAt };
  }

  /**
   * `ok` for first iterations and for continuing ones signed by a key held here, within the age limit and
   * not seen before on this replica. A request that verifies is remembered (a second copy is `replayed`).
   */
  verify(route: IterationRoute, request: AgentRequest, properties: Readonly<Record<string, string | undefined>>): Verdict {
    // A subagent's first request continues its supervisor's conversation: it must be signed like a `next`.
    if (request.history.length === 0 && request.correlation_id === '') return 'ok';
    const checked = this.check(route, request, properties, this.maxAgeMs);
    if (checked.verdict !== 'ok') return checked.verdict;
    return this.seen.remember(properties[SIGNATURE_PROPERTY]!, checked.signedAt + this.maxAgeMs, this.now()) ? 'ok' : 'replayed';
  }

  /**
   * The check of a message that is held and may be delivered again (the supervisor's aggregation topic): it
   * must always be signed, by a key held here, at most `maxAgeMs` ago; a second copy is not refused (the
   * fan-in itself drops duplicates). `signedAt` is the verified signing time.
   */
  verifyHeld(
    route: IterationRoute,
    request: AgentRequest,
    properties: Readonly<Record<string, string | undefined>>,
    maxAgeMs: number,
  ): { verdict: Exclude<Verdict, 'replayed'>; signedAt: number } {
    return this.check(route, request, properties, maxAgeMs);
  }

  private check(
    route: IterationRoute,
    request: AgentRequest,
    properties: Readonly<Record<string, string | undefined>>,
    maxAgeMs: number,
  ): { verdict: Exclude<Verdict, 'replayed'>; signedAt: number } {
    const signature = properties[SIGNATURE_PROPERTY];
    const signedAt = properties[SIGNED_AT_PROPERTY];
    if (!signature) return { verdict: 'missing', signedAt: 0 };
    if (signedAt === undefined || !/^\d{1,16}$/.test(signedAt)) return { verdict: 'bad', signedAt: 0 };
    if (!this.keys.some((key) => same(hmac(key, route, request, signedAt), signature))) return { verdict: 'bad', signedAt: 0 };
    const now = this.now();
    const at = Number(signedAt);
    if (now - at > maxAgeMs || at - now > CLOCK_SKEW_MS) return { verdict: 'stale', signedAt: at };
    return { verdict: 'ok', signedAt: at };
  }
}

function hmac(key: string, route: IterationRoute, request: AgentRequest, signedAt: string): string {
  return createHmac('sha256', key).update(canonicalIteration(route, request, signedAt)).digest('base64url');
}

function same(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
