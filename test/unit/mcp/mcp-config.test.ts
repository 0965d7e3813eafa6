// docs/trustgraph-agent-notes.md §2.9, §5.3: config type `mcp` = key → {url, remote-name?, auth-token?}.
import { describe, expect, it } from 'vitest';
import { parseMcpConfig, redactUrl } from '../../../src/mcp/mcp-config.js';

const json = (value: unknown) => JSON.stringify(value);

describe('config type "mcp"', () => {
  it('reads entries; remote-name defaults to the key; an empty token means no token', () => {
    const { entries, problems } = parseMcpConfig('ws', {
      bank: json({ url: 'http://bank:8000/mcp', 'remote-name': 'get_balance', 'auth-token': 's3cret' }),
      weather: json({ url: ' https://weather/mcp ' }),
      open: json({ url: 'http://open/mcp', 'remote-name': null, 'auth-token': '' }),
    });
    expect(problems).toEqual([]);
    expect(entries.get('bank')).toEqual({ key: 'bank', url: 'http://bank:8000/mcp', remoteName: 'get_balance', authToken: 's3cret' });
    expect(entries.get('weather')).toEqual({ key: 'weather', url: 'https://weather/mcp', remoteName: 'weather', authToken: undefined });
    expect(entries.get('open')).toMatchObject({ remoteName: 'open', authToken: undefined });
  });

  it('leaves bad entries out with a problem naming the workspace, key and field, and keeps the rest', () => {
    const { entries, problems } = parseMcpConfig('ws', {
      good: json({ url: 'http://good/mcp' }),
      nourl: json({ 'remote-name': 'x' }),
      ftp: json({ url: 'ftp://files/mcp' }),
      broken: '{not json',
      list: json([1]),
      token: json({ url: 'http://t/mcp', 'auth-token': 12345 }),
    });
    expect([...entries.keys()]).toEqual(['good']);
    expect(problems.map((p) => p.text)).toEqual([
      'workspace "ws", mcp key "broken": invalid JSON: ' + problems[0]!.message.replace('invalid JSON: ', ''),
      'workspace "ws", mcp key "ftp": field "url": expected an http:// or https:// URL, got "ftp://files/mcp"',
      'workspace "ws", mcp key "list": expected a JSON object, got a list',
      'workspace "ws", mcp key "nourl": field "url": required: the MCP server URL (http:// or https://)',
      'workspace "ws", mcp key "token": field "auth-token": expected a string (the bearer token)',
    ]);
  });

  it('never shows a token or URL credentials in problems', () => {
    const { problems } = parseMcpConfig('ws', {
      a: json({ url: 'gopher://user:pw@host/x', 'auth-token': { secret: 'tok-123' } }),
    });
    const text = problems.map((p) => p.text).join('\n');
    expect(text).not.toContain('pw');
    expect(text).not.toContain('tok-123');
  });

  it('redacts URLs for display', () => {
    expect(redactUrl('https://user:pw@host:1/mcp?key=abc')).toBe('https://***@host:1/mcp?…');
    expect(redactUrl('http://host/mcp')).toBe('http://host/mcp');
  });

  it('treats a missing type as no entries', () => {
    expect(parseMcpConfig('ws', undefined).entries.size).toBe(0);
  });
});
