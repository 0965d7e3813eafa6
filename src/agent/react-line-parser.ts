/**
 * The ReAct line parser: the one-pass, line-by-line grammar of a model's ReAct text, shared by the
 * non-streaming parser (react-parser.ts, fed the whole text) and the streaming one (streaming-parser.ts, fed
 * each line as it completes), so that both always agree.
 *
 * The grammar is TrustGraph's `parse_react_response` (docs/trustgraph-agent-notes.md §3.4) with its crashes and quirks fixed:
 *
 * 1. `\r\n` becomes `\n`. The text is trimmed. One leading code-fence line (```` ``` ```` plus an optional
 *    language tag) is dropped when more text follows it, and one trailing ```` ``` ```` line is dropped
 *    when it is the last line (and not the first).
 * 2. Lines are matched after trimming, on case-sensitive prefixes. Lines that match nothing outside a
 *    thought, answer or `Args` value are ignored (so text before the first `Thought:` is ignored).
 * 3. `Thought:` starts (or continues) the thought; following lines are appended, trimmed and joined with
 *    single spaces, until a line starting with `Action:`, `Args:` or `Final Answer:`. Blank lines are
 *    skipped and a repeated `Thought:` label is dropped; every thought block is appended to the thought.
 * 4. `Final Answer:` starts the answer; it runs to the end of the text, or to a line starting with
 *    `Thought:` or `Action:`. The answer is trimmed as a whole and keeps its inner newlines and
 *    indentation. It is never JSON-decoded. A `Final Answer:` wins over an earlier incomplete action.
 * 5. `Action:` sets the tool name: trimmed, runs of `"` removed at both ends, trimmed again. A later
 *    `Action:` replaces it. `Action: foo Args: {…}` on one line is split at `Args:`.
 * 6. `Args:` starts a JSON value on the same line or a following one (blank lines and code-fence lines
 *    before it are skipped). An object or array is collected with a string-aware bracket scanner (braces
 *    and brackets inside JSON strings, and escaped quotes, do not count) and ends where the brackets
 *    balance; the rest of that line is ignored. Anything else is a scalar that ends with its line.
 *    `null` and a missing value mean `{}`; an array or scalar is a failure; so is invalid JSON.
 * 7. **Action wins once its Args are complete:** when an `Args` value ends while a tool name is set, the
 *    result is that Action and the rest of the text is ignored (this is where the streaming parser stops
 *    too). So `Final Answer:` after a complete `Thought/Action/Args` block is ignored, however the JSON
 *    was laid out. `Args` before `Action:` is kept, and parsing goes on.
 * 8. At the end: an Action if a (non-empty) tool name was set, else a failure "Response has thought but no
 *    action or final answer" if there was a thought, else "Could not parse response".
 */

import { errorMessage } from '../errors/index.js';
import { checkJsonLimits, MAX_NESTING_DEPTH } from '../wire/index.js';
import { PARSE_ERROR_PREFIX, type ParseFailure, type ParsedResponse } from './react-output.js';

export const THOUGHT = 'Thought:';
export const ACTION = 'Action:';
export const ARGS = 'Args:';
export const FINAL_ANSWER = 'Final Answer:';
export type Keyword = typeof THOUGHT | typeof ACTION | typeof ARGS | typeof FINAL_ANSWER;
export const KEYWORDS: readonly Keyword[] = [THOUGHT, ACTION, ARGS, FINAL_ANSWER];

/** A code-fence line starts with this. */
export const FENCE = '```';

/** At most this many characters of the model's text are quoted in a failure message. */
export const MAX_QUOTED_CHARS = 2000;

/** Whether a character is whitespace in the sense of `String.prototype.trim`. @internal */
export function isWhitespace(ch: string): boolean {
  const code = ch.charCodeAt(0);
  if (code === 32 || (code >= 9 && code <= 13)) return true;
  return code > 127 && WHITESPACE.test(ch);
}
const WHITESPACE = /^\s$/;

/** The keyword a trimmed line starts with, if any. @internal */
export function keywordOf(trimmed: string): Keyword | undefined {
  return KEYWORDS.find((k) => trimmed.startsWith(k));
}

export type LineMode = 'scan' | 'thought' | 'args' | 'answer' | 'done';
type ArgsPhase = 'pre' | 'struct';
type Leading = 'start' | 'fence-held' | 'content';

/**
 * The parser core: consumes the response one line at a time (without the `\n`, after `\r\n` → `\n`)
 * and decides in one pass. Fed the whole text by `parseReactResponse` and line by line by the streaming
 * parser, so both always agree. Internal to the two parsers.
 *
 * The mode at the start of a line never depends on blank lines or a deferred fence line (they are held
 * back only to drop them at the end of the text), which is what lets the streaming parser classify a
 * line as it arrives.
 */
export class ReactLineParser {
  // Input shaping: leading blank lines and fence, trailing fence and blank lines.
  private leading: Leading = 'start';
  private heldLeadingFence = '';
  private readonly deferred: string[] = [];
  private quoted = '';
  private quotedLines = 0;
  private quotedCut = false;

  // Grammar state.
  private modeValue: LineMode = 'scan';
  private thought = '';
  private actionName: string | null = null;
  private args: Record<string, unknown> | null = null;
  private answerLines: string[] = [];
  private argsPhaseValue: ArgsPhase = 'pre';
  private argsText = '';
  private depth = 0;
  private inString = false;
  private escaped = false;
  private result: ParsedResponse | null = null;

  /** The mode the next line will be read in. */
  get mode(): LineMode {
    return this.modeValue;
  }

  /** While in `args` mode: still looking for the start of the value (`pre`) or inside it (`struct`). */
  get argsPhase(): ArgsPhase {
    return this.argsPhaseValue;
  }

  /** A non-empty tool name has been read. */
  get hasAction(): boolean {
    return this.actionName !== null && this.actionName !== '';
  }

  /** The result is decided; further lines are ignored. */
  get done(): boolean {
    return this.result !== null;
  }

  pushLine(line: string): void {
    if (this.result !== null) return;
    const blank = line.trim() === '';
    switch (this.leading) {
      case 'start':
        if (blank) return;
        if (line.trimStart().startsWith(FENCE)) {
          this.leading = 'fence-held';
          this.heldLeadingFence = line;
          return;
        }
        this.leading = 'content';
        this.forward(line);
        return;
      case 'fence-held':
        if (blank) return;
        this.leading = 'content';
        this.heldLeadingFence = '';
        this.forward(line);
        return;
      case 'content':
        if (blank) {
          this.deferred.push(line);
          return;
        }
        this.replayDeferred();
        if (line.trimEnd() === FENCE) this.deferred.push(line);
        else this.forward(line);
    }
  }

  /** End of text: decide. Idempotent. */
  end(): ParsedResponse {
    this.result ??= this.decideAtEnd();
    return this.result;
  }

  private decideAtEnd(): ParsedResponse {
    if (this.leading === 'fence-held') {
      this.leading = 'content';
      this.forward(this.heldLeadingFence);
    }
    // Whatever is still deferred is trailing blank lines and possibly the closing fence: dropped.
    this.deferred.length = 0;
    if (this.modeValue === 'answer') this.finishAnswer();
    else if (this.modeValue === 'args') this.completeArgs(this.argsPhaseValue === 'pre' ? null : this.argsText);
    if (this.result !== null) return this.result;
    if (this.actionName !== null && this.actionName !== '') {
      return { kind: 'action', thought: this.thought, name: this.actionName, args: this.args ?? {} };
    }
    if (this.thought !== '') {
      return failure(this.thought, `Response has thought but no action or final answer: ${this.quote()}`);
    }
    return failure(this.thought, `Could not parse response: ${this.quote()}`);
  }

  private replayDeferred(): void {
    if (this.deferred.length === 0) return;
    const lines = this.deferred.splice(0);
    for (const l of lines) this.forward(l);
  }

  private forward(line: string): void {
    this.recordQuote(line);
    this.process(line);
  }

  private recordQuote(line: string): void {
    if (this.quotedCut) return;
    const piece = this.quotedLines === 0 ? line.trimStart() : `\n${line}`;
    this.quotedLines++;
    const room = MAX_QUOTED_CHARS - this.quoted.length;
    if (piece.length > room) {
      this.quoted += piece.slice(0, room);
      this.quotedCut = true;
    } else {
      this.quoted += piece;
    }
  }

  private quote(): string {
    return this.quotedCut ? `${this.quoted}…` : this.quoted.trimEnd();
  }

  private process(line: string): void {
    switch (this.modeValue) {
      case 'scan':
        this.scanLine(line);
        return;
      case 'thought':
        this.thoughtLine(line);
        return;
      case 'args':
        this.argsLine(line);
        return;
      case 'answer':
        this.answerLine(line);
        return;
      case 'done':
        return;
    }
  }

  private scanLine(line: string): void {
    const trimmed = line.trim();
    const keyword = keywordOf(trimmed);
    if (keyword === undefined) return;
    const rest = line.slice(line.length - line.trimStart().length + keyword.length);
    switch (keyword) {
      case THOUGHT:
        this.addThought(rest.trim());
        this.modeValue = 'thought';
        return;
      case FINAL_ANSWER:
        this.answerLines = [rest];
        this.modeValue = 'answer';
        return;
      case ACTION: {
        const argsAt = rest.indexOf(ARGS);
        this.actionName = cleanActionName(argsAt >= 0 ? rest.slice(0, argsAt) : rest);
        if (argsAt >= 0) this.startArgs(rest.slice(argsAt + ARGS.length));
        return;
      }
      case ARGS:
        this.startArgs(rest);
        return;
    }
  }

  private thoughtLine(line: string): void {
    const trimmed = line.trim();
    if (trimmed === '') return;
    const keyword = keywordOf(trimmed);
    if (keyword === THOUGHT) {
      this.addThought(trimmed.slice(THOUGHT.length).trim());
    } else if (keyword !== undefined) {
      this.modeValue = 'scan';
      this.scanLine(line);
    } else {
      this.addThought(trimmed);
    }
  }

  private addThought(part: string): void {
    if (part === '') return;
    this.thought = this.thought === '' ? part : `${this.thought} ${part}`;
  }

  private answerLine(line: string): void {
    const keyword = keywordOf(line.trim());
    if (keyword === THOUGHT || keyword === ACTION) this.finishAnswer();
    else this.answerLines.push(line);
  }

  private finishAnswer(): void {
    this.result = { kind: 'final', thought: this.thought, answer: this.answerLines.join('\n').trim() };
    this.modeValue = 'done';
  }

  private startArgs(rest: string): void {
    this.modeValue = 'args';
    this.argsPhaseValue = 'pre';
    this.argsText = '';
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
    this.scanArgs(rest);
  }

  private argsLine(line: string): void {
    if (this.argsPhaseValue === 'pre') {
      const trimmed = line.trim();
      if (trimmed === '') return;
      if (keywordOf(trimmed) !== undefined) {
        // `Args:` with no value before the next labelled line: no arguments.
        this.completeArgs(null);
        this.process(line);
        return;
      }
    } else {
      this.argsText += '\n';
    }
    this.scanArgs(line);
  }

  /** Consume (part of) a line of the Args value: find its start, then scan to the balancing bracket. */
  private scanArgs(text: string): void {
    let i = 0;
    if (this.argsPhaseValue === 'pre') {
      while (i < text.length && isWhitespace(text.charAt(i))) i++;
      if (i === text.length) return;
      if (text.startsWith(FENCE, i)) return; // a code fence around the JSON
      const first = text.charAt(i);
      if (first !== '{' && first !== '[') {
        this.completeArgs(text.slice(i).trim());
        return;
      }
      this.argsPhaseValue = 'struct';
    }
    const start = i;
    for (; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (ch === 0x5c /* \ */) this.escaped = true;
        else if (ch === 0x22 /* " */) this.inString = false;
      } else if (ch === 0x22) {
        this.inString = true;
      } else if (ch === 0x7b /* { */ || ch === 0x5b /* [ */) {
        this.depth++;
      } else if (ch === 0x7d /* } */ || ch === 0x5d /* ] */) {
        this.depth--;
        if (this.depth === 0) {
          this.argsText += text.slice(start, i + 1);
          this.completeArgs(this.argsText);
          return;
        }
      }
    }
    this.argsText += text.slice(start);
  }

  /** The Args value is complete (`null`: there was none). */
  private completeArgs(text: string | null): void {
    let value: unknown = null;
    if (text !== null) {
      try {
        value = JSON.parse(text);
      } catch (err) {
        this.fail(`Invalid JSON in Args: ${errorMessage(err)}`);
        return;
      }
    }
    const overLimit = checkJsonLimits(value, { maxDepth: MAX_NESTING_DEPTH });
    if (overLimit !== undefined) {
      this.fail(`Args has ${overLimit}; send a flatter JSON object`);
      return;
    }
    if (Array.isArray(value)) {
      this.fail('Args must be a JSON object, got array');
      return;
    }
    if (value !== null && typeof value !== 'object') {
      this.fail(`Args must be a JSON object, got ${typeof value}`);
      return;
    }
    this.args = (value ?? {}) as Record<string, unknown>;
    this.modeValue = 'scan';
    if (this.hasAction) {
      this.result = { kind: 'action', thought: this.thought, name: this.actionName ?? '', args: this.args };
      this.modeValue = 'done';
    }
  }

  private fail(detail: string): void {
    this.result = failure(this.thought, detail);
    this.modeValue = 'done';
  }
}

/** A parse failure quoting `thought`. @internal */
export function failure(thought: string, detail: string): ParseFailure {
  return { kind: 'parse-error', thought, message: `${PARSE_ERROR_PREFIX}${detail}` };
}

/** `"name"`, `""name""` → `name`; single quotes and backticks are kept (as TrustGraph). */
function cleanActionName(raw: string): string {
  return raw.trim().replace(/^"+/, '').replace(/"+$/, '').trim();
}
