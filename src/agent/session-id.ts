/**
 * The id a conversation goes by: the request's `session_id`, or, on a first request without one, a new UUID, as
 * TrustGraph's agent makes it (the `next` request carries it on). Told to the iteration's events, so that the
 * audit line of the first iteration names the session its later iterations share.
 */
import { randomUUID } from 'node:crypto';
import type { AgentRequest } from '../wire/index.js';
import type { IterationEvents } from './iteration.js';

export function sessionIdOf(request: AgentRequest, events: IterationEvents): string {
  const sessionId = request.session_id || randomUUID();
  events.sessionNamed(sessionId);
  return sessionId;
}
