/**
 * The events a streaming ReAct parse emits, and the queue that builds them: consecutive text of one kind is
 * joined into one event, and every thought block that emitted text is closed by exactly one `final: true`.
 */

export type StreamEvent =
  | {
      readonly type: 'thought';
      readonly text: string;
      /** This event ends the thought block (the parser left the thought, or the stream ended). */
      readonly final: boolean;
    }
  | { readonly type: 'answer'; readonly text: string };

interface PendingEvent {
  type: 'thought' | 'answer';
  text: string;
  final: boolean;
}

export class StreamEventQueue {
  private out: PendingEvent[] = [];
  private blockOpen = false;
  /** Some thought text was emitted (a later thought block starts with a space). */
  thoughtAny = false;
  /** Some text of the current answer was emitted (the owner resets it when an answer starts). */
  answerStarted = false;

  thought(text: string): void {
    this.thoughtAny = true;
    this.blockOpen = true;
    const last = this.out.at(-1);
    if (last !== undefined && last.type === 'thought' && !last.final) last.text += text;
    else this.out.push({ type: 'thought', text, final: false });
  }

  /** Ends the open thought block, if any: marks its last event final, or adds an empty final one. */
  closeThought(): void {
    if (!this.blockOpen) return;
    this.blockOpen = false;
    const last = this.out.at(-1);
    if (last !== undefined && last.type === 'thought' && !last.final) last.final = true;
    else this.out.push({ type: 'thought', text: '', final: true });
  }

  answer(text: string): void {
    if (text === '') return;
    this.answerStarted = true;
    const last = this.out.at(-1);
    if (last !== undefined && last.type === 'answer') last.text += text;
    else this.out.push({ type: 'answer', text, final: false });
  }

  /** The events so far, leaving the queue empty. */
  take(): StreamEvent[] {
    const events = this.out.map(
      (e): StreamEvent =>
        e.type === 'thought' ? { type: 'thought', text: e.text, final: e.final } : { type: 'answer', text: e.text },
    );
    this.out = [];
    return events;
  }
}
