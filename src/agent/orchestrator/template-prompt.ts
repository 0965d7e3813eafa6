/**
 * A call to one of the orchestrator's prompt templates (`task-type-classify`, `plan-create`, ...), as
 * TrustGraph's PromptClient makes it: every variable JSON-encoded into `terms`; the reply is its text when it
 * has any, else its JSON `object` decoded. Usage is added to the tracker.
 */
import type { RequestClient } from '../../bus/index.js';
import { makePromptRequest, pythonJsonDumps, type PromptRequest, type PromptResponse } from '../../wire/index.js';
import { PromptServiceError } from '../errors.js';
import type { UsageTracker } from '../usage.js';

export type PromptClient = RequestClient<PromptRequest, PromptResponse>;

export interface TemplateReply {
  /** The text reply ('' when the template answered with an object). */
  readonly text: string;
  /** The decoded `object` (undefined when the reply was text or the object was not JSON). */
  readonly value: unknown;
}

function encodeTerms(variables: Readonly<Record<string, unknown>>): Record<string, string> {
  return Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, pythonJsonDumps(value)]));
}

function raise(id: string, response: PromptResponse): void {
  if (response.error) {
    throw new PromptServiceError(`prompt service error in template ${id} (${response.error.type}): ${response.error.message}`);
  }
}

export async function callTemplate(
  client: PromptClient,
  id: string,
  variables: Readonly<Record<string, unknown>>,
  usage: UsageTracker,
): Promise<TemplateReply> {
  const response = await client.request(makePromptRequest({ id, terms: encodeTerms(variables), streaming: false }));
  raise(id, response);
  usage.track(response);
  if (response.text) return { text: response.text, value: undefined };
  try {
    return { text: '', value: JSON.parse(response.object) as unknown };
  } catch {
    return { text: '', value: undefined };
  }
}

/**
 * A template whose text is the answer: streamed chunk by chunk to `onChunk` when `streaming`, returned whole.
 * Usage comes from the last message of the stream, as TrustGraph counts it.
 */
export async function callTemplateText(
  client: PromptClient,
  id: string,
  variables: Readonly<Record<string, unknown>>,
  usage: UsageTracker,
  streaming: boolean,
  onChunk: (text: string) => Promise<void>,
): Promise<string> {
  if (!streaming) return (await callTemplate(client, id, variables, usage)).text;
  const request = makePromptRequest({ id, terms: encodeTerms(variables), streaming: true });
  const parts: string[] = [];
  let last: PromptResponse | undefined;
  for await (const response of client.stream(request, { isLast: (r) => r.end_of_stream || r.error !== null })) {
    raise(id, response);
    last = response;
    if (response.text) {
      parts.push(response.text);
      await onChunk(response.text);
    }
  }
  if (last) usage.track(last);
  return parts.join('');
}
