/**
 * Sizing of the messages an iteration derives from a request, before they are sent. A transport carries a
 * bounded payload (the WebSocket API's text frame less base64's third; the broker's `maxMessageSize` on the
 * binary protocol), and the encoder writes Python's `ensure_ascii` escapes, so a 4-byte emoji costs 12 bytes:
 * sizes are measured with the real encoder, never estimated from the input.
 *
 * What does not fit is made to fit where that loses nothing essential: explain triples get long literals cut,
 * then are left out; thoughts and observations are cut with a note. An answer or a `next` request that
 * cannot fit fails with a `MessageTooLargeError` that says what lifts the limit.
 */
import type { Properties, Transport } from '../bus/index.js';
import { clipText } from '../errors/index.js';
import { MessageTooLargeError } from './errors.js';
import { agentResponseCodec, makeTriples, type AgentResponse, type Term, type Triple, type Triples } from '../wire/index.js';

/** How much one message may carry, and what to tell the operator when that is not enough. */
export interface MessageBudget {
  /** Largest payload in bytes (Infinity: no limit). */
  readonly maxPayloadBytes: number;
  /** Which settings lift the limit, for error messages. */
  readonly remedy: string;
}

const WEBSOCKET_REMEDY =
  "raise the broker's webSocketMaxTextFrameSize (1 MiB by default; base64 takes a third of it) together with " +
  "the agent's frame limit, or use --transport native (the binary protocol carries the broker's maxMessageSize, " +
  '5 MB by default)';
const NATIVE_REMEDY = "raise the broker's maxMessageSize (5 MB by default)";

/** The budget of one message with these properties on this transport. */
export function budgetFor(transport: Transport, properties: Properties = {}): MessageBudget {
  const maxPayloadBytes = transport.maxPayloadBytes?.(properties) ?? Infinity;
  return { maxPayloadBytes, remedy: transport.kind === 'websocket' ? WEBSOCKET_REMEDY : NATIVE_REMEDY };
}

/** Share of the transport's message size that a request may take by default (`--max-request-bytes`). */
export const DEFAULT_REQUEST_SHARE = 0.75;

/**
 * The largest request the agent accepts: the setting, or the default share of what one message can carry.
 * The agent's own `next` requests are held to it too, or the next iteration would refuse them.
 */
export function requestLimitBytes(transport: Transport, configured?: number): number {
  if (configured !== undefined) return configured;
  return Math.floor(budgetFor(transport, { id: 'x'.repeat(64) }).maxPayloadBytes * DEFAULT_REQUEST_SHARE);
}

/** The budget of a `next` request: what the transport carries, at most what a request may be. */
export function nextRequestBudget(transport: Transport, properties: Properties, configuredLimit?: number): MessageBudget {
  const message = budgetFor(transport, properties);
  const limit = requestLimitBytes(transport, configuredLimit);
  if (limit >= message.maxPayloadBytes) return message;
  return { maxPayloadBytes: limit, remedy: `raise --max-request-bytes (requests are refused above it; by default three quarters of what one message carries), or ${message.remedy}` };
}

/** Called with a sentence when a message was shortened or left out. */
export type BudgetWarning = (message: string) => void;

/** Literals longer than this are cut first when explain triples do not fit. */
const MAX_CUT_LITERAL_CHARS = 1000;

/**
 * The encoded response, shortened if it does not fit (explain triples, thought and observation text).
 * @throws MessageTooLargeError when an answer, error or other response cannot fit as it is.
 */
export function fitResponse(response: AgentResponse, budget: MessageBudget, warn: BudgetWarning): Buffer {
  const payload = agentResponseCodec.encode(response);
  if (payload.length <= budget.maxPayloadBytes) return payload;
  const what = response.message_type === 'explain' ? `the explain response for ${clip(response.explain_id ?? '')}` : `the ${response.message_type || 'error'} response`;

  if (response.message_type === 'explain') {
    const cut = agentResponseCodec.encode({ ...response, explain_triples: cutLiterals(response.explain_triples) });
    if (cut.length <= budget.maxPayloadBytes) {
      warn(`${what} was ${payload.length} bytes, over the ${budget.maxPayloadBytes}-byte limit: long literals were cut`);
      return cut;
    }
    warn(`${what} was ${payload.length} bytes, over the ${budget.maxPayloadBytes}-byte limit: its triples were left out`);
    return fitOrThrow(agentResponseCodec.encode({ ...response, explain_triples: [] }), what, budget);
  }

  if (response.message_type === 'thought' || response.message_type === 'observation') {
    const shortened = shortenContent(response, budget);
    warn(`${what} was ${payload.length} bytes, over the ${budget.maxPayloadBytes}-byte limit: its text was cut`);
    return fitOrThrow(shortened, what, budget);
  }
  throw new MessageTooLargeError(what, payload.length, budget.maxPayloadBytes, budget.remedy);
}

/**
 * The encoded Triples message for the explainability topic, long literals cut if needed, or undefined when it
 * cannot fit even then (provenance never fails a dialog).
 */
export function fitTriples(
  encode: (triples: Triples) => Buffer,
  triples: Triples,
  budget: MessageBudget,
  warn: BudgetWarning,
): Buffer | undefined {
  const payload = encode(triples);
  if (payload.length <= budget.maxPayloadBytes) return payload;
  const what = `the explainability triples of ${clip(triples.metadata?.id ?? '')}`;
  const cut = encode(makeTriples({ ...triples, triples: cutLiterals(triples.triples) }));
  if (cut.length <= budget.maxPayloadBytes) {
    warn(`${what} were ${payload.length} bytes, over the ${budget.maxPayloadBytes}-byte limit: long literals were cut`);
    return cut;
  }
  warn(`${what} were ${payload.length} bytes, over the ${budget.maxPayloadBytes}-byte limit: they were left out`);
  return undefined;
}

/** Fails with a MessageTooLargeError when the encoded message is over the budget. */
export function checkFits(payload: Buffer, what: string, budget: MessageBudget): Buffer {
  return fitOrThrow(payload, what, budget);
}

function fitOrThrow(payload: Buffer, what: string, budget: MessageBudget): Buffer {
  if (payload.length > budget.maxPayloadBytes) {
    throw new MessageTooLargeError(what, payload.length, budget.maxPayloadBytes, budget.remedy);
  }
  return payload;
}

function cutTerm(term: Term): Term {
  const value = term.value ?? '';
  if (value.length <= MAX_CUT_LITERAL_CHARS) return term;
  return { ...term, value: `${value.slice(0, MAX_CUT_LITERAL_CHARS)}… (${value.length - MAX_CUT_LITERAL_CHARS} characters cut)` };
}

function cutLiterals(triples: readonly Triple[]): Triple[] {
  return triples.map((t) => ({ ...t, ...(t.o ? { o: cutTerm(t.o) } : {}) }));
}

/** Cut the text so the encoded message fits: the encoded size per character is measured, not assumed. */
function shortenContent(response: AgentResponse, budget: MessageBudget): Buffer {
  let content = response.content;
  let payload = agentResponseCodec.encode(response);
  for (let attempt = 0; attempt < 8 && payload.length > budget.maxPayloadBytes && content.length > 0; attempt++) {
    const overhead = agentResponseCodec.encode({ ...response, content: '' }).length;
    const perChar = (payload.length - overhead) / content.length;
    const keep = Math.max(0, Math.floor(((budget.maxPayloadBytes - overhead - 200) / perChar) * 0.95));
    content = `${content.slice(0, Math.min(keep, content.length - 1))}… (cut: too large for one message)`;
    payload = agentResponseCodec.encode({ ...response, content });
  }
  return payload;
}

function clip(text: string): string {
  return clipText(text, 120);
}
