/**
 * The non-streaming ReAct parser: the whole model response through the line parser (react-line-parser.ts,
 * which documents the grammar), one line at a time.
 */
import type { ParsedResponse } from './react-output.js';
import { failure, ReactLineParser } from './react-line-parser.js';

/**
 * Parse one complete model response. Never throws: anything that is not an action or a final answer is
 * a {@link ParseFailure} (including `null`/`undefined`, which a JSON prompt template produces).
 */
export function parseReactResponse(text: string | null | undefined): ParsedResponse {
  if (typeof text !== 'string') {
    const got = text === null ? 'null' : typeof text;
    return failure('', `Expected string response, got ${got}`);
  }
  const lines = new ReactLineParser();
  const normalized = text.replace(/\r\n/g, '\n');
  let start = 0;
  while (!lines.done) {
    const end = normalized.indexOf('\n', start);
    if (end < 0) {
      lines.pushLine(normalized.slice(start));
      break;
    }
    lines.pushLine(normalized.slice(start, end));
    start = end + 1;
  }
  return lines.end();
}
