/**
 * The credentials among the service's settings (settings.ts): what the logger (observability/service-logger.ts) and
 * the HTTP endpoints (observability/http-server.ts) mask wherever it occurs, whatever option carried it.
 */
import { decodeURIComponentSafe } from './errors/secret-text.js';
import type { Settings } from './settings.js';

/** Options whose whole value is a credential. */
const SECRET_OPTIONS = ['pulsarApiKey', 'httpToken', 'signingKey', 'signingKeyPrevious', 'lokiPassword', 'rabbitmqPassword', 'kafkaSaslPassword'] as const;
/** Options holding a URL, whose user-info and query values may be credentials. */
const URL_OPTIONS = ['pulsarHost', 'pulsarWebSocketUrl', 'brokerAdminUrl', 'lokiUrl'] as const;
/** RabbitMQ's well-known default password is no secret (masking it would garble every "guest" in a line). */
const RABBITMQ_DEFAULT_PASSWORD = 'guest';

/**
 * Every credential the settings carry, whatever option carries it: what no log line, listing or metric may show
 * (the logger and the HTTP endpoints mask each wherever it occurs).
 */
export function settingsSecrets(settings: Settings): string[] {
  const secrets: string[] = [];
  for (const key of SECRET_OPTIONS) {
    const value = settings[key];
    if (value && !(key === 'rabbitmqPassword' && value === RABBITMQ_DEFAULT_PASSWORD)) secrets.push(value);
  }
  for (const key of URL_OPTIONS) {
    const value = settings[key];
    if (value) secrets.push(...urlCredentials(value));
  }
  return [...new Set(secrets.filter((secret) => secret !== ''))];
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
