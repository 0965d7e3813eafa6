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

/**
 * `text` with every occurrence of each secret replaced by `***`, longest first (so no part of one survives). A
 * secret is also found as it is written inside a JSON string (a log line), where quotes and backslashes are escaped.
 */
export function maskSecrets(text: string, secrets: Iterable<string | undefined>): string {
  const forms = [...secrets].flatMap((s) => (s === undefined ? [] : [s, JSON.stringify(s).slice(1, -1)]));
  const unique = [...new Set(forms.filter((s) => s.length >= MIN_SECRET_LENGTH))];
  unique.sort((a, b) => b.length - a.length);
  let out = text;
  for (const secret of unique) if (out.includes(secret)) out = out.split(secret).join(MASK);
  return out;
}

/** The URL as it may be shown: user-info (`user:password@`) replaced by `***@`, query string dropped. */
export function redactUrl(text: string): string {
  try {
    const url = new URL(text);
    if (url.username !== '' || url.password !== '') {
      url.username = '***';
      url.password = '';
    }
    const hadQuery = url.search !== '';
    url.search = '';
    url.hash = '';
    return hadQuery ? `${url.toString()}?…` : url.toString();
  } catch {
    // No URL parser takes a cluster's list of hosts (`pulsar://a:6650,b:6650`): the same rules by hand.
    return text.replace(/\/\/[^/@]*@/, '//***@').replace(/[?#].*$/s, (rest) => (rest.startsWith('?') ? '?…' : ''));
  }
}

export interface BasicAuth {
  readonly username: string;
  readonly password: string;
}

/**
 * A URL's user-info taken out, to be sent as HTTP basic auth: fetch refuses a URL that carries credentials
 * ("Request cannot be constructed from a URL that includes credentials"). The rest of the URL (its query
 * included) is kept. A URL without user-info, or one that does not parse, comes back as it was.
 */
export function withoutCredentials(text: string): { url: string; basicAuth?: BasicAuth } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { url: text };
  }
  if (url.username === '' && url.password === '') return { url: text };
  const basicAuth = { username: decodeURIComponentSafe(url.username), password: decodeURIComponentSafe(url.password) };
  url.username = '';
  url.password = '';
  return { url: url.toString(), basicAuth };
}

/** The `Authorization` header of basic auth. */
export function basicAuthorization({ username, password }: BasicAuth): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

export function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
