/**
 * Tamper-evident iterations. With a signing key, every `next` message carries an HMAC-SHA256 in the message
 * property `tg-agent-signature` and the time it was signed (milliseconds since the epoch) in
 * `tg-agent-signed-at`. The HMAC covers a canonical encoding of the whole AgentRequest (question, state,
 * group, history with every step field, collection, streaming, session id, ...), the workspace, the flow,
 * the `id` property and the signing time. An iteration that arrives with history but without a valid
 * signature was not written by an agent holding the key: someone edited a running conversation, moved it
 * to another flow, or wrote one from outside.
 *
 * A genuine `next` can still be captured and sent again unchanged. Three bounds: a signature older than
 * `maxAgeMs` is refused (`stale`); each replica remembers the signatures accepted within that window, its own
 * and (through seen-signature-ledger.ts) every other replica's, and refuses a second one (`replayed`); and on a
 * non-persistent request topic a signature from before this replica began listening (less the longest a genuine
 * `next` takes to be published) is refused (`replayed`): nothing published then can reach it legitimately, so a
 * replay across a restart finds no memory to slip past.
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
/** The layout of a seen-signature record on the ledger topic (seen-signature-ledger.ts). */
const SEEN_LAYOUT = 'tg-agent-seen/1';
/** How far replicas' clocks may differ (keep them within this, as NTP does). */
export const LISTENING_SKEW_MS = 5_000;
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
 * Why a ledger record is not taken: `expired` (its acceptance is past the age limit: nothing to remember),
 * `not-yet-valid` (it expires further ahead than the age limit allows: replicas with another `--signing-max-age`,
 * or clocks apart), `forged` (its MAC is not of a key held here), `unreadable` (not a record).
 */
export const RECORD_REFUSALS = ['expired', 'not-yet-valid', 'forged', 'unreadable'] as const;
export type RecordRefusal = (typeof RECORD_REFUSALS)[number];

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
  /**
   * Signatures remembered per replica to refuse replays. Past it the oldest are pushed out, and a signature expiring
   * no later than one pushed out is refused as a replay (seen-signatures.ts). Default 100 000.
   */
  replayCacheSize?: number;
  /**
   * How long before this replica began listening a signature may be and still be taken as new: the longest a
   * genuine `next` takes from its signing to its publishing (a publish retried through a broker outage) plus
   * the clock margin. Default: `LISTENING_SKEW_MS` alone.
   */
  listeningMarginMs?: number;
  now?: () => number;
}

/** Where a checked `next` arrived: on a non-persistent topic nothing from before the replica listened is genuine. */
export interface Arrival {
  /** The request topic keeps messages (`persistent://`): a backlog from before this replica started is genuine. */
  readonly persistent: boolean;
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
  /** Signatures from before this on a non-persistent topic are refused; see `listeningSince`. */
  private notBefore: number;
  private readonly listeningMarginMs: number;
  /** Told of each signature accepted here (the ledger shares it with the other replicas). */
  onAccepted: ((signature: string, expiresAt: number) => void) | undefined;

  constructor(
    private readonly key: string,
    options: IterationSignerOptions = {},
  ) {
    this.keys = options.previousKey ? [key, options.previousKey] : [key];
    this.maxAgeMs = options.maxAgeMs ?? DEFAULT_SIGNING_MAX_AGE_SECONDS * 1000;
    this.seen = new SeenSignatures(options.replayCacheSize ?? 100_000);
    this.now = options.now ?? Date.now;
    this.listeningMarginMs = options.listeningMarginMs ?? LISTENING_SKEW_MS;
    this.notBefore = this.now() - this.listeningMarginMs;
  }

  /** This replica listens from `at` on (its ledger subscription, made before the request topics'). */
  listeningSince(at: number): void {
    this.notBefore = at - this.listeningMarginMs;
  }

  /**
   * A ledger record: a signature another replica accepted, and when that acceptance expires (both under `mac`).
   * Remembered, so that a copy is a replay here too, when it is fresh and signed with a key held here; otherwise
   * why not. Freshness comes first (the cheaper check, and a flood of collected old records costs no HMAC).
   */
  acceptSeen(signature: string, expiresAt: number, mac: string): RecordRefusal | undefined {
    const now = this.now();
    if (expiresAt <= now) return 'expired';
    // Genuine records expire at their signing time plus the age limit, and no signing time lies further ahead.
    if (expiresAt > now + this.maxAgeMs + CLOCK_SKEW_MS) return 'not-yet-valid';
    if (!this.verifySeen(signature, expiresAt, mac)) return 'forged';
    this.seen.remember(signature, expiresAt, now);
    return undefined;
  }

  /** The HMAC of a ledger record, so that only key holders can mark a signature as used. */
  signSeen(signature: string, expiresAt: number): string {
    return createHmac('sha256', this.key).update(JSON.stringify([SEEN_LAYOUT, signature, expiresAt])).digest('base64url');
  }

  private verifySeen(signature: string, expiresAt: number, mac: string): boolean {
    return this.keys.some((key) => same(createHmac('sha256', key).update(JSON.stringify([SEEN_LAYOUT, signature, expiresAt])).digest('base64url'), mac));
  }

  /** The properties to put on a `next` message. */
  sign(route: IterationRoute, request: AgentRequest): Record<string, string> {
    const signedAt = String(this.now());
    return { [SIGNATURE_PROPERTY]: hmac(this.key, route, request, signedAt), [SIGNED_AT_PROPERTY]: signedAt };
  }

  /**
   * `ok` for first iterations and for continuing ones signed by a key held here, within the age limit, not
   * accepted before by any replica this one heard of, and (on a non-persistent topic) signed since this replica
   * listens. A request that verifies is remembered (a second copy is `replayed`) and told to `onAccepted`.
   */
  verify(route: IterationRoute, request: AgentRequest, properties: Readonly<Record<string, string | undefined>>, arrival: Arrival = { persistent: false }): Verdict {
    // A subagent's first request continues its supervisor's conversation: it must be signed like a `next`.
    if (request.history.length === 0 && request.correlation_id === '') return 'ok';
    const checked = this.check(route, request, properties, this.maxAgeMs);
    if (checked.verdict !== 'ok') return checked.verdict;
    if (!arrival.persistent && checked.signedAt < this.notBefore) return 'replayed';
    const signature = properties[SIGNATURE_PROPERTY]!;
    const expiresAt = checked.signedAt + this.maxAgeMs;
    if (!this.seen.remember(signature, expiresAt, this.now())) return 'replayed';
    this.onAccepted?.(signature, expiresAt);
    return 'ok';
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
