/**
 * Secrets kept out of text that leaves the process (error messages, logs, HTTP answers): a URL's user-info and
 * query values, tokens. Libraries put the URL they failed on into their error messages, in any form, so the
 * known secret parts are replaced wherever they occur.
 */

const MASK = '***';
/** Shorter values are left alone: replacing "1" or "ab" everywhere would garble the text and hide nothing. */
const MIN_SECRET_LENGTH = 3;

/** The secret parts of a URL: the password, the user name, and every query value, raw and decoded. */
export function urlSecrets(text: string): string[] {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return [];
  }
  const secrets = [url.password, url.username, decodeURIComponentSafe(url.password), decodeURIComponentSafe(url.username)];
  for (const [, value] of url.searchParams) secrets.push(value, encodeURIComponent(value));
  const rawQuery = url.search.slice(1);
  for (const pair of rawQuery.split('&')) {
    const at = pair.indexOf('=');
    if (at >= 0) secrets.push(pair.slice(at + 1));
  }
  return secrets;
}

/** `text` with every occurrence of each secret replaced by `***`, longest first (so no part of one survives). */
export function maskSecrets(text: string, secrets: Iterable<string | undefined>): string {
  const unique = [...new Set([...secrets].filter((s): s is string => s !== undefined && s.length >= MIN_SECRET_LENGTH))];
  unique.sort((a, b) => b.length - a.length);
  let out = text;
  for (const secret of unique) out = out.split(secret).join(MASK);
  return out;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
