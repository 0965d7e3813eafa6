/**
 * Error text for logs and responses: the message of anything thrown, and text cut to a bounded length so
 * that an error echoing a huge value cannot flood a log line or overflow a response.
 */

/** The message of a thrown value (an Error's message, anything else as a string). */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * `text` cut to `max` characters, marked with `…`; with `sayLength`, the mark also says how long the text
 * was: `… (12345 characters)`.
 */
export function clipText(text: string, max: number, options: { sayLength?: boolean } = {}): string {
  if (text.length <= max) return text;
  return options.sayLength ? `${text.slice(0, max)}… (${text.length} characters)` : `${text.slice(0, max)}…`;
}
