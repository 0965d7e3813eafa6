// The three discovery settings: flag, environment variable, YAML key, defaults, validation, --help.
import { describe, expect, it } from 'vitest';
import { helpText, loadSettings } from '../../../src/settings.js';

describe('MCP discovery settings', () => {
  it('is off by default, with a 300 s TTL and a 10 s timeout', () => {
    expect(loadSettings([], {}).settings).toMatchObject({ mcpDiscovery: false, mcpDiscoveryTtlSeconds: 300, mcpDiscoveryTimeoutSeconds: 10 });
  });

  it('reads flags and environment variables', () => {
    expect(loadSettings(['--mcp-discovery', '--mcp-discovery-ttl', '60', '--mcp-discovery-timeout', '2.5'], {}).settings).toMatchObject({
      mcpDiscovery: true,
      mcpDiscoveryTtlSeconds: 60,
      mcpDiscoveryTimeoutSeconds: 2.5,
    });
    expect(
      loadSettings([], { TG_AGENT_MCP_DISCOVERY: 'true', TG_AGENT_MCP_DISCOVERY_TTL: '30', TG_AGENT_MCP_DISCOVERY_TIMEOUT: '4' }).settings,
    ).toMatchObject({ mcpDiscovery: true, mcpDiscoveryTtlSeconds: 30, mcpDiscoveryTimeoutSeconds: 4 });
    expect(loadSettings(['--no-mcp-discovery'], { TG_AGENT_MCP_DISCOVERY: 'yes' }).settings?.mcpDiscovery).toBe(false);
  });

  it('refuses bad values, naming the option', () => {
    expect(() => loadSettings(['--mcp-discovery-ttl', '0'], {})).toThrow(/--mcp-discovery-ttl \(TG_AGENT_MCP_DISCOVERY_TTL\)/);
    expect(() => loadSettings([], { TG_AGENT_MCP_DISCOVERY_TIMEOUT: 'soon' })).toThrow(/--mcp-discovery-timeout/);
    expect(() => loadSettings([], { TG_AGENT_MCP_DISCOVERY: 'maybe' })).toThrow(/--mcp-discovery \(TG_AGENT_MCP_DISCOVERY\)/);
  });

  it('is listed by --help', () => {
    const text = helpText();
    for (const name of ['--mcp-discovery ', 'TG_AGENT_MCP_DISCOVERY_TTL', 'TG_AGENT_MCP_DISCOVERY_TIMEOUT']) expect(text).toContain(name);
  });
});
