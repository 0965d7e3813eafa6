/**
 * The streaming ReAct parser: fed the model's text in chunks, it emits thought and answer text as it
 * arrives, and at the end gives the same result as `parseReactResponse` on the whole text, for
 * any chunking. (TrustGraph's streaming parser, docs/trustgraph-agent-notes.md §3.5, disagrees with its non-streaming one and
 * raises where the other returns; this one shares the non-streaming core and never raises.)
 *
 * How: complete lines go to the shared line parser ({@link ReactLineParser}, react-line-parser.ts), which decides the
 * result in one pass. Events are derived from the characters as they arrive, with the same rules the
 * core applies to whole lines; only the start of a line is held back until it is clear whether it is a
 * label (`Thought:`, `Action:`, `Args:`, `Final Answer:`, at most 13 characters) or, in a thought or an
 * answer, a closing code fence (```` ``` ````). Whitespace is held back until the next non-space
 * character, because trailing whitespace is trimmed from the result.
 *
 * Guarantees (checked by the property tests):
 * - the concatenated `thought` event texts equal `result.thought`;
 * - the concatenated `answer` event texts equal `result.answer` when the result is Final, and are empty
 *   otherwise — a trailing fence is never emitted;
 * - every thought block that emitted text is closed by exactly one event with `final: true` (an event
 *   with empty text when the block's last text went out in an earlier call).
 *
 * State: INITIAL → THOUGHT → ACTION → ARGS, or THOUGHT → FINAL_ANSWER, then COMPLETE (see
 * {@link StreamingReactParser.state}). Once the core has decided (Args complete, answer ended by a
 * `Thought:`/`Action:` line, invalid Args), further input is ignored and no longer buffered. Memory is the
 * current line plus what the result itself needs; an unlabelled line that the grammar ignores (such as
 * text before the first `Thought:`) keeps at most {@link MAX_QUOTED_CHARS} characters. Each input character is looked at a bounded number of times.
 */

import type { ParsedResponse } from './react-output.js';
import {
  ACTION,
  FENCE,
  FINAL_ANSWER,
  KEYWORDS,
  MAX_QUOTED_CHARS,
  ReactLineParser,
  THOUGHT,
  isWhitespace,
  type Keyword,
  type LineMode,
} from './react-line-parser.js';
import { StreamEventQueue, type StreamEvent } from './stream-events.js';
import { InvalidUseError } from '../errors/index.js';

export type { StreamEvent } from './stream-events.js';

export type StreamState = 'initial' | 'thought' | 'action' | 'args' | 'final-answer' | 'complete';

export interface StreamFinish {
  /** Events still held back at the end of the stream (including a closing `final: true` thought). */
  readonly events: StreamEvent[];
  readonly result: ParsedResponse;
}

/** How the characters of the current line are treated. */
type Role =
  | 'undecided' // leading whitespace or a possible label / fence so far
  | 'fence' // ``` at column 0 followed only by whitespace so far (in a thought or answer)
  | 'thought' // thought text (after a `Thought:` label, or a whole continuation line)
  | 'answer' // answer text (after `Final Answer:`, or a whole answer line)
  | 'none'; // no events from this line

/** Characters consumed, and the count when the last thought character was emitted. */
interface RawCount {
  consumed: number;
  atLastThought: number;
}

export class StreamingReactParser {
  private readonly core = new ReactLineParser();
  private readonly events = new StreamEventQueue();
  private pendingCR = false;
  private stopped = false;
  private finalResult: ParsedResponse | null = null;
  private readonly raw: RawCount = { consumed: 0, atLastThought: 0 };

  // The current line.
  private lineSegments: string[] = [];
  private lineLength = 0;
  private lineLimit = Number.POSITIVE_INFINITY;
  private lineMode: LineMode = 'scan';
  private role: Role = 'undecided';
  private lineKeyword: Keyword | null = null;
  private lineChars = 0;
  private leadingWs = true;
  private col0 = false;
  private probe = '';
  private contentStarted = false;
  private wsRun = '';

  // Thought emission: a ``` line held back until it is clear it is not the closing fence.
  private thoughtFence = false;

  // Answer emission: `held` is text after the last emitted character; `fenceEnd` marks the end of a
  // held ``` line that becomes content as soon as a later line has a non-space character.
  private held = '';
  private fenceEnd = -1;

  /** Where the parser is, counting the labelled line being received. */
  get state(): StreamState {
    if (this.finalResult !== null || this.stopped) return 'complete';
    if (this.lineKeyword !== null) {
      if (this.lineMode === 'answer') {
        return this.lineKeyword === THOUGHT || this.lineKeyword === ACTION ? 'complete' : 'final-answer';
      }
      return KEYWORD_STATE[this.lineKeyword];
    }
    switch (this.lineMode) {
      case 'scan':
        return this.core.hasAction ? 'action' : 'initial';
      case 'thought':
        return 'thought';
      case 'args':
        return 'args';
      case 'answer':
        return 'final-answer';
      case 'done':
        return 'complete';
    }
  }

  /**
   * Characters of the model's text received after the last thought character emitted and not (yet) part of
   * any event: held-back whitespace, a line start that may be a label. TrustGraph's parser counts them in its
   * 20-character hold-back; src/agent/thought-stream.ts does the same.
   */
  get heldBack(): number {
    return this.raw.consumed - this.raw.atLastThought;
  }

  /** Feed the next chunk of model text; returns the events it makes certain. */
  feed(chunk: string): StreamEvent[] {
    if (this.finalResult !== null) throw new InvalidUseError('StreamingReactParser.feed() called after finish()');
    if (this.stopped || chunk === '') return [];
    let text = chunk;
    if (this.pendingCR) {
      this.pendingCR = false;
      if (text.charAt(0) !== '\n') text = `\r${text}`;
    }
    if (text.endsWith('\r')) {
      this.pendingCR = true;
      text = text.slice(0, -1);
    }
    this.consume(text.replace(/\r\n/g, '\n'));
    return this.events.take();
  }

  /** End of stream: the remaining events and the result. Idempotent (later calls return no events). */
  finish(): StreamFinish {
    if (this.finalResult !== null) return { events: [], result: this.finalResult };
    if (this.pendingCR) {
      this.pendingCR = false;
      if (!this.stopped) this.consume('\r');
    }
    if (!this.stopped) {
      this.finishLine(); // a held fence on the last line is the closing fence: it stays unemitted
      this.pushLineToCore();
    }
    const result = this.core.end();
    this.events.closeThought();
    this.finalResult = result;
    this.held = '';
    this.lineSegments = [];
    return { events: this.events.take(), result };
  }

  private consume(text: string): void {
    let segmentStart = 0;
    for (let i = 0; i < text.length && !this.stopped; i++) {
      const ch = text.charAt(i);
      this.raw.consumed++;
      if (ch === '\n') {
        this.appendSegment(text.slice(segmentStart, i));
        segmentStart = i + 1;
        this.endLine();
      } else {
        this.onChar(ch);
      }
    }
    if (!this.stopped) this.appendSegment(text.slice(segmentStart));
  }

  private appendSegment(segment: string): void {
    const room = this.lineLimit - this.lineLength;
    if (segment === '' || room <= 0) return;
    const kept = segment.length > room ? segment.slice(0, room) : segment;
    this.lineSegments.push(kept);
    this.lineLength += kept.length;
  }

  private onChar(ch: string): void {
    const first = this.lineChars === 0;
    this.lineChars++;
    switch (this.role) {
      case 'none':
        return;
      case 'thought':
        this.thoughtChar(ch);
        return;
      case 'answer':
        this.answerChar(ch);
        return;
      case 'fence':
        this.probe += ch;
        if (!isWhitespace(ch)) this.decide(undefined); // ```x: not a fence line after all
        return;
      case 'undecided':
        if (this.leadingWs) {
          if (isWhitespace(ch)) {
            if (this.lineMode === 'answer') this.answerWs(ch);
            return;
          }
          this.leadingWs = false;
          this.col0 = first;
          this.confirmHeldFence();
        }
        this.probe += ch;
        this.classify();
    }
  }

  /** Decide the line's role from its first characters once they can no longer be a label or fence. */
  private classify(): void {
    const probe = this.probe;
    const keyword = KEYWORDS.find((k) => probe.startsWith(k));
    if (keyword !== undefined) {
      this.decide(keyword);
      return;
    }
    if (KEYWORDS.some((k) => k.startsWith(probe))) return;
    const fenceMatters = this.lineMode === 'thought' || this.lineMode === 'answer';
    if (fenceMatters && this.col0 && FENCE.startsWith(probe)) {
      if (probe === FENCE) this.role = 'fence';
      return;
    }
    this.decide(undefined);
  }

  /** Mirror of what the core will do with this line; replays the held characters into the new role. */
  private decide(keyword: Keyword | undefined): void {
    this.lineKeyword = keyword ?? null;
    const probe = this.probe;
    this.probe = '';
    switch (this.lineMode) {
      case 'scan':
      case 'args': // only the `pre` phase without an action name gets here
        if (keyword === THOUGHT) this.startThoughtText();
        else if (keyword === FINAL_ANSWER) this.startAnswer();
        else {
          this.role = 'none';
          // An unlabelled line is ignored by the core: keep only what a failure message can quote.
          if (keyword === undefined && this.lineMode === 'scan') this.lineLimit = this.lineChars + MAX_QUOTED_CHARS;
        }
        return;
      case 'thought':
        if (keyword === THOUGHT) {
          this.startThoughtText();
        } else if (keyword === undefined) {
          this.startThoughtText();
          for (const ch of probe) this.thoughtChar(ch);
        } else {
          this.events.closeThought();
          if (keyword === FINAL_ANSWER) this.startAnswer();
          else this.role = 'none';
        }
        return;
      case 'answer':
        if (keyword === THOUGHT || keyword === ACTION) {
          this.role = 'none'; // the answer ends before this line
        } else {
          this.role = 'answer';
          for (const ch of probe) this.answerChar(ch);
        }
        return;
      case 'done':
        this.role = 'none';
    }
  }

  private startThoughtText(): void {
    this.role = 'thought';
    this.contentStarted = false;
    this.wsRun = '';
  }

  private startAnswer(): void {
    this.role = 'answer';
    this.events.answerStarted = false;
    this.held = '';
    this.fenceEnd = -1;
  }

  private thoughtChar(ch: string): void {
    if (isWhitespace(ch)) {
      if (this.contentStarted) this.wsRun += ch;
      return;
    }
    const before = this.contentStarted ? this.wsRun : this.events.thoughtAny ? ' ' : '';
    this.wsRun = '';
    this.contentStarted = true;
    this.emitThought(before + ch);
  }

  private answerChar(ch: string): void {
    if (isWhitespace(ch)) {
      this.answerWs(ch);
      return;
    }
    this.events.answer(this.held + ch);
    this.held = '';
  }

  private answerWs(ch: string): void {
    if (this.events.answerStarted || this.held !== '') this.held += ch;
  }

  /** A non-space character on a later line: a held ``` line was not the closing fence. */
  private confirmHeldFence(): void {
    if (this.thoughtFence) {
      this.thoughtFence = false;
      this.emitThought(this.events.thoughtAny ? ` ${FENCE}` : FENCE);
    }
    if (this.fenceEnd >= 0) {
      this.events.answer(this.held.slice(0, this.fenceEnd));
      this.held = this.held.slice(this.fenceEnd);
      this.fenceEnd = -1;
    }
  }

  /** The line is complete (or the stream ended): settle what is still undecided about it. */
  private finishLine(): void {
    if (this.role === 'undecided' && this.probe !== '') {
      this.decide(undefined); // a line cut short of a label is plain text
    } else if (this.role === 'fence') {
      if (this.lineMode === 'thought') {
        this.thoughtFence = true;
      } else {
        this.held += FENCE;
        this.fenceEnd = this.held.length;
        this.held += this.probe.slice(FENCE.length);
      }
    }
  }

  private endLine(): void {
    this.finishLine();
    this.pushLineToCore();
    if (this.stopped) return;
    if (this.core.mode === 'answer') this.answerWs('\n');
    this.resetLine();
  }

  private pushLineToCore(): void {
    this.core.pushLine(this.lineSegments.join(''));
    this.lineSegments = [];
    this.lineLength = 0;
    if (this.core.done) {
      this.stopped = true;
      this.held = '';
    }
  }

  private resetLine(): void {
    this.lineLimit = Number.POSITIVE_INFINITY;
    this.lineMode = this.core.mode;
    this.lineKeyword = null;
    this.lineChars = 0;
    this.leadingWs = true;
    this.col0 = false;
    this.probe = '';
    this.contentStarted = false;
    this.wsRun = '';
    const silent =
      this.lineMode === 'done' ||
      (this.lineMode === 'args' && (this.core.argsPhase === 'struct' || this.core.hasAction));
    this.role = silent ? 'none' : 'undecided';
  }

  private emitThought(text: string): void {
    this.raw.atLastThought = this.raw.consumed;
    this.events.thought(text);
  }
}

const KEYWORD_STATE: Record<Keyword, StreamState> = {
  'Thought:': 'thought',
  'Action:': 'action',
  'Args:': 'args',
  'Final Answer:': 'final-answer',
};
