/**
 * The shape of streamed thought messages, as TrustGraph 2.11.1's ReAct agent sends them: its
 * `StreamingReActParser` keeps the last 20 characters of the model's text back while in a thought (they may
 * start the next label), and `end_of_message` is set on the chunk that ends the thought. Here too thought text
 * goes out as it arrives except for a tail: the last {@link THOUGHT_TAIL} characters of the model's text, counting
 * what the parser itself still holds (whitespace, a line start that may be a label); when the thought ends, the
 * rest goes out as the thought's last message, with `end_of_message: true`. So there is no extra empty message
 * to close a thought, at most one thought message per prompt-service chunk, and the chunk boundaries are
 * TrustGraph's.
 *
 * Two differences remain, both TrustGraph quirks that lose or add text: TrustGraph strips the thought's last
 * chunk (a space between it and the chunk before is lost) and, when `Thought:` and the space after it arrive in
 * different chunks, sends that space as a first chunk of its own. Here the chunks always join to the thought.
 *
 * Characters are counted as Python counts them (code points).
 */

/** Characters of a streamed thought held back until more arrive (TrustGraph's `MAX_DELIMITER_BUFFER`). */
export const THOUGHT_TAIL = 20;

export class ThoughtStream {
  private held: string[] = [];

  /** Thought text from the parser; sent later, by `release` or `end`. */
  add(text: string): void {
    for (const ch of text) this.held.push(ch);
  }

  /**
   * After a prompt-service chunk: the text to send now (all but the tail), if any. `heldBack` is what the parser
   * received after the thought text it gave and still holds; it counts towards the tail.
   */
  release(heldBack: number): string | undefined {
    const tail = Math.max(0, THOUGHT_TAIL - heldBack);
    if (this.held.length <= tail) return undefined;
    return this.held.splice(0, this.held.length - tail).join('');
  }

  /** The thought ended: its last message (undefined when it never had text). */
  end(): string | undefined {
    if (this.held.length === 0) return undefined;
    const text = this.held.join('');
    this.held = [];
    return text;
  }
}
