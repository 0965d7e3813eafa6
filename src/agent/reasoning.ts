/**
 * One call to the `agent-react` prompt and the parse of its text, streaming or not. Streaming thought and
 * answer chunks are handed to `onEvent` as they arrive (docs/trustgraph-agent-notes.md §3.5).
 */
import type { RequestClient } from '../bus/index.js';
import { promptRequestOf, type PromptRequest, type PromptResponse } from '../wire/index.js';
import { PromptServiceError } from './errors.js';
import { AGENT_REACT_TEMPLATE } from './prompt-terms.js';
import type { ParsedResponse } from './react-output.js';
import { parseReactResponse } from './react-parser.js';
import { StreamingReactParser, type StreamEvent } from './streaming-parser.js';

export interface ReasonOptions {
  client: RequestClient<PromptRequest, PromptResponse>;
  terms: Record<string, string>;
  streaming: boolean;
  onEvent: (event: StreamEvent) => Promise<void>;
  /**
   * Streaming only: called after the events of each prompt-service chunk, with the number of characters the
   * parser received after its last thought text and still holds (see `StreamingReactParser.heldBack`).
   */
  onChunkEnd?: (heldBack: number) => Promise<void>;
  /** Adds the call's token usage (the last message of a stream carries it). */
  usage?: { track(response: PromptResponse): void };
}

export async function reason(options: ReasonOptions): Promise<ParsedResponse> {
  const request = promptRequestOf({ id: AGENT_REACT_TEMPLATE, terms: options.terms, streaming: options.streaming });
  if (!options.streaming) {
    const response = await options.client.request(request);
    raise(response);
    options.usage?.track(response);
    return parseReactResponse(response.text || null);
  }
  const parser = new StreamingReactParser();
  let last: PromptResponse | undefined;
  for await (const response of options.client.stream(request, { isLast: (r) => r.end_of_stream || r.error !== null })) {
    raise(response);
    last = response;
    for (const event of parser.feed(response.text)) await options.onEvent(event);
    await options.onChunkEnd?.(parser.heldBack);
  }
  if (last) options.usage?.track(last);
  const { events, result } = parser.finish();
  for (const event of events) await options.onEvent(event);
  return result;
}

function raise(response: PromptResponse): void {
  if (response.error) {
    throw new PromptServiceError(`prompt service error (${response.error.type}): ${response.error.message}`);
  }
}
