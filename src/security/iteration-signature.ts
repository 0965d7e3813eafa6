/**
 * Tamper-evident iterations (DESIGN decision 10). With a signing key, every `next` message carries an
 * HMAC-SHA256 of (id, group, state, history) in the message property `tg-agent-signature`. An iteration
 * that arrives with history but without a valid signature was not written by an agent holding the key:
 * someone edited the group or state of a running conversation, or replayed one from outside.
 *
 * Only agents holding the key can continue signed conversations: in a mixed fleet with TrustGraph's
 * Python agent, leave signing off.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AgentRequest } from '../wire/index.js';

export const SIGNATURE_PROPERTY = 'tg-agent-signature';

/** The signed content, canonical: argument keys sorted, fields in a fixed order. */
function canonical(id: string, request: AgentRequest): string {
  const history = request.history.map((step) => [
    step.thought,
    step.action,
    Object.keys(step.arguments)
      .sort()
      .map((key) => [key, step.arguments[key]]),
    step.observation,
  ]);
  return JSON.stringify([id, request.group, request.state, history]);
}

/**
 * Signs with `key`; verifies against `key` and, during a rotation, `previousKey` too, so conversations
 * signed before the rotation (or by replicas not yet rolled) continue.
 */
export class IterationSigner {
  constructor(
    private readonly key: string,
    private readonly previousKey?: string,
  ) {}

  sign(id: string, request: AgentRequest): string {
    return hmac(this.key, id, request);
  }

  /** `missing` / `bad` when a continuing iteration is not signed by this key; `ok` for first iterations. */
  verify(id: string, request: AgentRequest, signature: string | undefined): 'ok' | 'missing' | 'bad' {
    if (request.history.length === 0) return 'ok';
    if (!signature) return 'missing';
    const keys = this.previousKey ? [this.key, this.previousKey] : [this.key];
    return keys.some((key) => same(hmac(key, id, request), signature)) ? 'ok' : 'bad';
  }
}

function hmac(key: string, id: string, request: AgentRequest): string {
  return createHmac('sha256', key).update(canonical(id, request)).digest('base64url');
}

function same(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
