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

/** Names listed in one message or log line at most; the rest are counted ("and 99 990 more"). */
export const MAX_LISTED_NAMES = 10;
/** Longer names are cut where they are listed. */
export const MAX_LISTED_NAME_LENGTH = 100;

/**
 * Names as a message lists them: at most `max`, each quoted (JSON, so no control character gets through) and cut
 * to MAX_LISTED_NAME_LENGTH characters, the rest counted. A request naming 100 000 groups gets a message of ten.
 */
export function listNames(names: readonly string[], max = MAX_LISTED_NAMES): string {
  const shown = firstNames(names, max).map((name) => JSON.stringify(name));
  const rest = names.length - shown.length;
  return rest > 0 ? `${shown.join(', ')} and ${rest} more` : shown.join(', ');
}

/** The first `max` names, each cut to MAX_LISTED_NAME_LENGTH characters: for a log field or an audit record. */
export function firstNames(names: readonly string[], max = MAX_LISTED_NAMES): string[] {
  return names.slice(0, max).map((name) => clipText(name, MAX_LISTED_NAME_LENGTH));
}
