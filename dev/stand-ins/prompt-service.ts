/**
 * TrustGraph's prompt service (the `prompt-rag` instance the agent calls, docs/trustgraph-agent-notes.md §3.2–3.5, §4.3) with a
 * scripted model instead of an LLM. `agent-react` requests go to `script`, any other template id (e.g.
 * `question` for text-completion tools, a prompt tool's template) to `templates[id]`.
 *
 * A reply is text (`string`), streamed chunks (`string[]`; joined when the request is not streaming), a
 * structured result (`{object}`), an error record (`{error: {type, message}}`) or raw bytes (`{raw}`, for
 * malformed-reply tests). Non-streaming requests get one message with `end_of_stream: true`; streaming ones
 * get one message per chunk and then an empty chunk with `end_of_stream: true`. Setting `error` makes every
 * reply that error (error injection).
 */
import type { Transport } from '../../src/bus/transport.js';
import {
  makePromptResponse,
  promptRequestCodec,
  promptResponseCodec,
  type PromptRequest,
  type PromptResponse,
} from '../../src/wire/index.js';
import {
  answerScripted,
  jsonOrString,
  scriptedHandle,
  startStandIn,
  type ErrorSpec,
  type ServiceStandIn,
  type SpecialReply,
} from './service-stand-in.js';

export type PromptReply = string | string[] | { object: unknown } | SpecialReply;

/** The JSON-decoded terms of a prompt request. */
export type PromptTerms = Record<string, unknown>;

export type PromptScript = (terms: PromptTerms, request: PromptRequest) => PromptReply | Promise<PromptReply>;

export interface PromptCall {
  /** Template id. */
  readonly id: string;
  readonly terms: PromptTerms;
  readonly streaming: boolean;
  readonly request: PromptRequest;
}

export interface PromptServiceOptions {
  transport: Transport;
  requestQueue: string;
  responseQueue: string;
  /** The model behind `agent-react`. */
  script: PromptScript;
  templates?: Record<string, PromptScript>;
  /** When set, every request is answered with this error. */
  error?: ErrorSpec;
  /**
   * Token usage put on each call's last reply (the one with `end_of_stream`), as TrustGraph's prompt service
   * reports the LLM's: the same for every call, or decided per call.
   */
  usage?: TokenUsage | PromptUsage;
}

export interface TokenUsage {
  in_token: number;
  out_token: number;
  model: string;
}

/** The usage of one call's reply; `undefined` leaves the fields null. */
export type PromptUsage = (call: PromptCall) => TokenUsage | undefined;

export interface PromptServiceStandIn {
  readonly bus: ServiceStandIn<PromptRequest, PromptResponse>;
  script: PromptScript;
  templates: Record<string, PromptScript>;
  error: ErrorSpec | undefined;
  /** Token usage on each reply (settable; see PromptServiceOptions.usage). */
  usage: TokenUsage | PromptUsage | undefined;
  /** Every request, terms decoded. */
  readonly calls: readonly PromptCall[];
  /** Only the `agent-react` requests. */
  reactCalls(): PromptCall[];
  /** The last `agent-react` request (throws when there is none). */
  lastReact(): PromptCall;
  stop(): Promise<void>;
}

export const AGENT_REACT = 'agent-react';

export function decodeTerms(terms: Readonly<Record<string, string>>): PromptTerms {
  return Object.fromEntries(Object.entries(terms).map(([name, value]) => [name, jsonOrString(value)]));
}

/** The tool names an `agent-react` request offered the model, in order. */
export function offeredToolNames(call: PromptCall): string[] {
  const tools = call.terms.tools;
  return Array.isArray(tools) ? tools.map((t) => String((t as { name?: unknown }).name)) : [];
}

export async function startPromptService(options: PromptServiceOptions): Promise<PromptServiceStandIn> {
  const calls: PromptCall[] = [];
  const state: { script: PromptScript; templates: Record<string, PromptScript>; error: ErrorSpec | undefined } = {
    script: options.script,
    templates: { ...(options.templates ?? {}) },
    error: options.error,
  };

  const bus = await startStandIn<PromptRequest, PromptResponse>({
    transport: options.transport,
    requestQueue: options.requestQueue,
    responseQueue: options.responseQueue,
    requestCodec: promptRequestCodec,
    responseCodec: promptResponseCodec,
    name: 'prompt',
    errorReply: (message) => makePromptResponse({ error: { type: 'llm-error', message }, end_of_stream: true }),
    async handle(request, ctx) {
      const terms = decodeTerms(request.terms);
      const call: PromptCall = { id: request.id, terms, streaming: request.streaming, request };
      calls.push(call);
      if (state.error) return makePromptResponse({ error: state.error, end_of_stream: true });
      const script = request.id === AGENT_REACT ? state.script : state.templates[request.id];
      if (!script) {
        return makePromptResponse({
          error: { type: 'llm-error', message: `Prompt template ${request.id} not known` },
          end_of_stream: true,
        });
      }
      const usage = (typeof service.usage === 'function' ? service.usage(call) : service.usage) ?? {};
      return answerScripted(await script(terms, request), ctx, {
        error: (error) => makePromptResponse({ error, end_of_stream: true }),
        value: (reply) => {
          if (typeof reply === 'object' && !Array.isArray(reply) && 'object' in reply) {
            return makePromptResponse({ text: null, object: JSON.stringify(reply.object), end_of_stream: true, ...usage });
          }
          const chunks = typeof reply === 'string' ? [reply] : reply;
          if (!request.streaming) return makePromptResponse({ text: chunks.join(''), end_of_stream: true, ...usage });
          return [
            ...chunks.map((text) => makePromptResponse({ text, end_of_stream: false })),
            makePromptResponse({ text: '', end_of_stream: true, ...usage }),
          ];
        },
      });
    },
  });

  const service: PromptServiceStandIn = scriptedHandle(bus, state, {
    bus,
    usage: options.usage,
    calls,
    reactCalls: () => calls.filter((c) => c.id === AGENT_REACT),
    lastReact() {
      const last = service.reactCalls().at(-1);
      if (!last) throw new Error('the prompt stand-in received no agent-react request');
      return last;
    },
  });
  return service;
}
