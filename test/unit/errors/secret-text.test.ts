import { describe, expect, it } from 'vitest';
import { maskSecrets, urlSecrets } from '../../../src/errors/secret-text.js';
import { classifyFailure } from '../../../src/mcp/tools-list-client.js';

const URL_WITH_SECRETS = 'https://svc-user:pa%24%24-Word-1@mcp.example:8443/mcp?token=tok-QUERY-42&region=eu-west';
const SECRETS = ['svc-user', 'pa%24%24-Word-1', 'pa$$-Word-1', 'tok-QUERY-42', 'eu-west'];

describe('secret text', () => {
  it("finds a URL's user name, password and query values, raw and decoded", () => {
    expect(new Set(urlSecrets(URL_WITH_SECRETS))).toEqual(new Set([...SECRETS, 'pa%24%24-Word-1', encodeURIComponent('tok-QUERY-42')]));
    expect(urlSecrets('not a url')).toEqual([]);
  });

  it('replaces every occurrence, longest first, and leaves values too short to matter', () => {
    expect(maskSecrets('a tok-QUERY-42 b tok-QUERY-42', ['tok-QUERY-42', 'tok', 'x'])).toBe('a *** b ***');
    expect(maskSecrets('abc', [undefined, 'ab'])).toBe('abc');
  });

  it('keeps every secret of an MCP endpoint out of discovery errors, whatever the library put in its message', () => {
    const endpoint = { url: URL_WITH_SECRETS, authToken: 'bearer-SECRET-9' };
    const failures = [
      new Error(`request to ${URL_WITH_SECRETS} failed, Authorization: Bearer bearer-SECRET-9`),
      new TypeError(`fetch failed for ${decodeURIComponent(URL_WITH_SECRETS)}`),
      new Error(`bad query region=eu-west&token=tok-QUERY-42 for user svc-user`),
    ];
    for (const error of failures) {
      const text = classifyFailure(error, endpoint, false, 5_000).message;
      for (const secret of [...SECRETS, 'bearer-SECRET-9']) expect(text, text).not.toContain(secret);
      expect(text).toContain('mcp.example');
    }
  });
});
