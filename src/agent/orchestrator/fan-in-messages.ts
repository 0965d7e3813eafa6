/**
 * The messages of the aggregation topic: an AgentRequest as TrustGraph writes it, keyed by its
 * `correlation_id`, with the property `tg-agent-fan-in` saying what it is:
 *
 * - `fan-out`: the supervisor's request (the synthesis template) with the fan-out's `correlation_id` and
 *   `expected_siblings`, and `tg-agent-fan-out-at` the time of the fan-out (ms since the epoch);
 * - `completion`: a subagent's `subagent-completion` request, forwarded as it arrived on the request topic;
 * - `cancel`: the supervisor's request again, sent when its subagent requests could not all be published (the
 *   client already has its error): the fan-in ends without another message, and late completions are dropped.
 *
 * With `--signing-key` each one is signed like a `next` message but apart from it, its kind inside what is
 * signed (iteration-signature.ts), and the consumer refuses one that is not.
 * The `id` property is the client's, as on every message of the conversation.
 */
import type { IncomingMessage, OutgoingMessage, Properties } from '../../bus/index.js';
import { agentRequestCodec, type AgentRequest } from '../../wire/index.js';
import type { Cancel, Completion, FanOutRecord } from './fan-in.js';
import type { FanInKind } from '../iteration.js';
import { FanInMessageError } from '../errors.js';

export const FAN_IN_PROPERTY = 'tg-agent-fan-in';
const FAN_IN_KINDS: readonly string[] = ['fan-out', 'completion', 'cancel'] satisfies FanInKind[];

/** The message's kind, as its property says (with signing, the signature binds it); undefined when it is none. */
export function fanInKindOf(properties: Properties): FanInKind | undefined {
  const kind = properties[FAN_IN_PROPERTY];
  return kind !== undefined && FAN_IN_KINDS.includes(kind) ? (kind as FanInKind) : undefined;
}
export const FAN_OUT_AT_PROPERTY = 'tg-agent-fan-out-at';

export function fanInMessage(kind: FanInKind, request: AgentRequest, properties: Properties, now: number): OutgoingMessage {
  return {
    payload: agentRequestCodec.encode(request),
    properties: { ...properties, [FAN_IN_PROPERTY]: kind, ...(kind === 'fan-out' ? { [FAN_OUT_AT_PROPERTY]: String(now) } : {}) },
    key: request.correlation_id,
  };
}

export type DecodedFanIn =
  | { kind: 'fan-out'; record: FanOutRecord }
  | { kind: 'completion'; completion: Completion }
  | { kind: 'cancel'; cancel: Cancel };

/**
 * Read one message of the aggregation topic (its payload already decoded: `request`); throws (with what is
 * wrong) when it is not one. `signedAt`, when its signature was verified, is the fan-out's time: unlike the
 * plain property it cannot be rewritten.
 */
export function readFanInMessage(message: Pick<IncomingMessage, 'properties'>, request: AgentRequest, signedAt?: number): DecodedFanIn {
  const kind = message.properties[FAN_IN_PROPERTY];
  const id = message.properties.id ?? '';
  if (request.correlation_id === '') throw new FanInMessageError('an aggregation message without a correlation_id');
  if (kind === 'completion') return { kind, completion: { correlationId: request.correlation_id, id, request } };
  if (kind === 'cancel') return { kind, cancel: { correlationId: request.correlation_id, id } };
  if (kind !== 'fan-out') throw new FanInMessageError(`an aggregation message whose ${FAN_IN_PROPERTY} property is ${JSON.stringify(kind ?? null)}`);
  const createdAt = signedAt ?? Number(message.properties[FAN_OUT_AT_PROPERTY]);
  if (!Number.isFinite(createdAt)) throw new FanInMessageError(`a fan-out record without a valid ${FAN_OUT_AT_PROPERTY} property`);
  const expectedSiblings = Math.max(1, request.expected_siblings);
  return { kind, record: { correlationId: request.correlation_id, id, createdAt, template: request, expectedSiblings } };
}
