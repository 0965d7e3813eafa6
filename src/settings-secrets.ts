/**
 * The credentials among the service's settings (settings.ts): what the logger (observability/service-logger.ts) and
 * the HTTP endpoints (observability/http-server.ts) mask wherever it occurs, whatever option carried it.
 */
import { decodeURIComponentSafe } from './errors/index.js';
import { OPTIONS, SettingsSchema, type Settings } from './settings.js';

/**
 * Every credential the settings carry, whatever option carries it (the options marked `secret`, the service's
 * own and each backend's): what no log line, listing or metric may show (the logger and the HTTP endpoints mask
 * each wherever it occurs). A value left at its default, such as RabbitMQ's well-known `guest`, is no secret:
 * masking it would garble every "guest" in a line.
 */
export function settingsSecrets(settings: Settings): string[] {
  const values: string[] = [];
  const urls: string[] = [];
  for (const option of OPTIONS) {
    const value: unknown = settings[option.key];
    if (option.secret === undefined || typeof value !== 'string' || value === defaultOf(option.key)) continue;
    if (option.secret === 'value') values.push(value);
    else urls.push(...urlCredentials(value));
  }
  return [...new Set([...values, ...urls].filter((secret) => secret !== ''))];
}

function defaultOf(key: keyof Settings): unknown {
  return SettingsSchema.shape[key].safeParse(undefined).data;
}

/**
 * A URL option's credentials: its password, and the values of query parameters named like one (`token`, `key`,
 * `secret`, `password`, `auth`, `sig`). Not the user name nor other query values: names such as `admin` or `json`
 * masked everywhere would garble the listing.
 */
function urlCredentials(text: string): string[] {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return [];
  }
  const found = [url.password, decodeURIComponentSafe(url.password)];
  for (const [name, value] of url.searchParams) if (/token|key|secret|passw|auth|sig/i.test(name)) found.push(value, encodeURIComponent(value));
  return found;
}
