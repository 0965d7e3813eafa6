import { describe, expect, it } from 'vitest';
import { parseServiceTimeouts, replyTimeouts } from '../../../src/flow/service-timeouts.js';
import { loadSettings } from '../../../src/settings.js';

describe('per-service reply timeouts', () => {
  it('reads <service>=<first>[/<gap>] per service', () => {
    expect(parseServiceTimeouts('graph-rag=120, mcp-tool=300/30,prompt=/15')).toEqual({
      'graph-rag': { firstSeconds: 120 },
      'mcp-tool': { firstSeconds: 300, gapSeconds: 30 },
      prompt: { gapSeconds: 15 },
    });
    expect(parseServiceTimeouts('')).toEqual({});
  });

  it('refuses what it cannot read, naming the part', () => {
    expect(() => parseServiceTimeouts('graphrag=10')).toThrow(/unknown service "graphrag" in "graphrag=10" \(services: prompt, graph-rag,/);
    expect(() => parseServiceTimeouts('prompt=0')).toThrow(`prompt's first-reply timeout must be a number of seconds greater than 0, got "0"`);
    expect(() => parseServiceTimeouts('prompt=10/x')).toThrow(`prompt's gap timeout must be a number of seconds greater than 0, got "x"`);
    expect(() => parseServiceTimeouts('prompt')).toThrow('"prompt" is not <service>=<seconds>[/<gap seconds>]');
    expect(() => parseServiceTimeouts('prompt=1,prompt=2')).toThrow('service "prompt" is given twice');
  });

  it('takes a service own setting first, then --prompt-timeout for the prompt service, then --request-timeout; the gap from --stream-gap-timeout', () => {
    const settings = { requestTimeoutSeconds: 600, promptTimeoutSeconds: 300, streamGapTimeoutSeconds: 45, serviceTimeouts: parseServiceTimeouts('graph-rag=120/10') };
    expect(replyTimeouts(settings, 'prompt')).toEqual({ firstMs: 300_000, gapMs: 45_000 });
    expect(replyTimeouts(settings, 'graph-rag')).toEqual({ firstMs: 120_000, gapMs: 10_000 });
    expect(replyTimeouts(settings, 'mcp-tool')).toEqual({ firstMs: 600_000, gapMs: 45_000 });
    expect(replyTimeouts({ requestTimeoutSeconds: 600 }, 'tool-service')).toEqual({ firstMs: 600_000, gapMs: 60_000 });
  });

  it('are settings: a flag or the environment, and a bad value stops the start naming it', () => {
    const ok = loadSettings(['--service-timeouts', 'mcp-tool=30', '--stream-gap-timeout', '20'], {});
    expect(ok.settings).toMatchObject({ serviceTimeouts: { 'mcp-tool': { firstSeconds: 30 } }, streamGapTimeoutSeconds: 20 });
    expect(loadSettings([], { TG_AGENT_SERVICE_TIMEOUTS: 'prompt=900/30' }).settings?.serviceTimeouts).toEqual({ prompt: { firstSeconds: 900, gapSeconds: 30 } });
    expect(loadSettings([], {}).settings?.streamGapTimeoutSeconds).toBe(60);
    expect(() => loadSettings(['--service-timeouts', 'nope=1'], {})).toThrow(/service-timeouts.*unknown service "nope"/s);
  });
});
