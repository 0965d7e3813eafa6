import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { brokerAdminUrlFor, webSocketUrlFor } from '../../src/bus/pulsar/index.js';
import { helpText, loadSettings, SettingsError } from '../../src/settings.js';

describe('settings', () => {
  it('uses TrustGraph defaults when nothing is given', () => {
    const { settings } = loadSettings([], {});
    expect(settings).toMatchObject({
      id: 'agent-manager',
      pulsarHost: 'pulsar://pulsar:6650',
      concurrency: 1,
      maxIterations: 10,
      metricsPort: 8000,
      metrics: true,
      logLevel: 'info',
      transport: 'auto',
    });
    expect(Object.isFrozen(settings)).toBe(true);
  });

  it('takes flags over environment variables', () => {
    const { settings } = loadSettings(['--max-iterations', '4', '-P', '9100'], {
      TG_AGENT_MAX_ITERATIONS: '7',
      PULSAR_HOST: 'pulsar://broker:6650',
    });
    expect(settings?.maxIterations).toBe(4);
    expect(settings?.metricsPort).toBe(9100);
    expect(settings?.pulsarHost).toBe('pulsar://broker:6650');
  });

  it('reads the security options: HTTP host and token, signing age, undeclared arguments', () => {
    expect(loadSettings([], {}).settings).toMatchObject({ httpHost: '0.0.0.0', signingMaxAgeSeconds: 600, undeclaredArguments: 'drop' });
    expect(loadSettings([], {}).settings?.httpToken).toBeUndefined();
    const { settings } = loadSettings(['--http-host', '127.0.0.1', '--signing-max-age', '30', '--undeclared-arguments', 'reject'], {
      TG_AGENT_HTTP_TOKEN: 'a-listing-token-of-length',
    });
    expect(settings).toMatchObject({ httpHost: '127.0.0.1', httpToken: 'a-listing-token-of-length', signingMaxAgeSeconds: 30, undeclaredArguments: 'reject' });
    expect(() => loadSettings(['--undeclared-arguments', 'ignore'], {})).toThrow(/--undeclared-arguments/);
    expect(() => loadSettings([], { TG_AGENT_HTTP_TOKEN: 'short' })).toThrow(/--http-token/);
  });

  it('accepts Python log level spellings', () => {
    expect(loadSettings(['-l', 'WARNING'], {}).settings?.logLevel).toBe('warn');
    expect(loadSettings([], { LOG_LEVEL: 'DEBUG' }).settings?.logLevel).toBe('debug');
  });

  it('turns a boolean off with --no-<flag>', () => {
    expect(loadSettings(['--no-metrics'], {}).settings?.metrics).toBe(false);
    expect(loadSettings([], { TG_AGENT_STRICT_TOOLS: 'true' }).settings?.strictTools).toBe(true);
  });

  it('names the bad option and the accepted values', () => {
    expect(() => loadSettings(['--concurrency', 'lots'], {})).toThrow(/--concurrency \(TG_AGENT_CONCURRENCY\).*accepted: iterations processed at once/s);
    expect(() => loadSettings(['--transport', 'carrier-pigeon'], {})).toThrow(SettingsError);
    expect(() => loadSettings(['--transport', 'carrier-pigeon'], {})).toThrow(/--transport.*accepted: auto \| native \| websocket/s);
  });

  it('refuses an aggregation topic that is not persistent at start, not when each flow starts', () => {
    expect(() => loadSettings(['--aggregation-topic', 'non-persistent://tg/request/{topic}-aggregation'], {})).toThrow(
      /--aggregation-topic \(TG_AGENT_AGGREGATION_TOPIC\): must start with persistent:\/\//,
    );
    expect(loadSettings(['--aggregation-topic', 'persistent://tg/fan-in/{topic}'], {}).settings?.aggregationTopic).toBe('persistent://tg/fan-in/{topic}');
  });

  it('refuses unknown flags with a pointer to --help', () => {
    expect(() => loadSettings(['--max-iteration', '3'], {})).toThrow(/--help/);
  });

  it('reads a YAML config file below env and flags', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-agent-settings-'));
    const file = join(dir, 'agent.yaml');
    writeFileSync(file, 'max-iterations: 6\nconcurrency: 3\nstrictTools: true\n');
    const { settings } = loadSettings(['-c', file, '--concurrency', '5'], {});
    expect(settings).toMatchObject({ maxIterations: 6, concurrency: 5, strictTools: true });
    writeFileSync(file, 'bogus: 1\n');
    expect(() => loadSettings(['-c', file], {})).toThrow(/unknown option "bogus"/);
  });

  it('derives the WebSocket URL from the Pulsar host', () => {
    const { settings } = loadSettings(['-p', 'pulsar://10.1.2.3:6650'], {});
    expect(webSocketUrlFor(settings!)).toBe('ws://10.1.2.3:8080');
    const { settings: explicit } = loadSettings(['--pulsar-ws-url', 'ws://127.0.0.1:18080/'], {});
    expect(webSocketUrlFor(explicit!)).toBe('ws://127.0.0.1:18080');
  });

  it("derives the broker admin URL from each host of the Pulsar service URL, and keeps a given one or list as it is", () => {
    expect(brokerAdminUrlFor(loadSettings(['-p', 'pulsar://10.1.2.3:6650'], {}).settings!)).toBe('http://10.1.2.3:8080');
    expect(brokerAdminUrlFor(loadSettings(['-p', 'pulsar://broker-1:6650,broker-2:6650'], {}).settings!)).toBe('http://broker-1:8080,http://broker-2:8080');
    expect(brokerAdminUrlFor(loadSettings(['-p', 'pulsar+ssl://broker-1,broker-2'], {}).settings!)).toBe('https://broker-1:8080,https://broker-2:8080');
    const list = 'http://127.0.0.1:18080,127.0.0.1:18081';
    expect(brokerAdminUrlFor(loadSettings(['-p', 'pulsar://a:6650,b:6650', '--pulsar-admin-url', list], {}).settings!)).toBe(list);
    expect(brokerAdminUrlFor(loadSettings(['--broker-admin-url', 'none'], {}).settings!)).toBeUndefined();
  });

  it('lists every option in --help', () => {
    expect(loadSettings(['--help'], {}).help).toBe(true);
    const text = helpText();
    for (const flag of ['--id', '--max-iterations', '--metrics-port', '--signing-key', '--transport', '--concurrency']) {
      expect(text).toContain(flag);
    }
  });
});

describe('--help', () => {
  it('lists every option once, in a section, and no line is wider than 100 columns', async () => {
    const { HELP_SECTIONS } = await import('../../src/settings-help.js');
    const { OPTIONS } = await import('../../src/settings.js');
    const sectioned = HELP_SECTIONS.flatMap((section) => section.flags);
    expect([...sectioned].sort()).toEqual(OPTIONS.map((option) => option.flag).sort());
    const text = helpText();
    expect(text.split('\n').filter((line) => line.length > 100)).toEqual([]);
    for (const title of ['Connection', 'TrustGraph', 'Groups and policy', 'Reliability', 'Observability']) expect(text).toMatch(new RegExp(`^${title}.*:$`, 'm'));
    expect(text).toContain('tg-agent lint [options]');
  });

  it('says in tg-agent lint --help how to run it from a checkout, within 100 columns', async () => {
    const { LINT_HELP } = await import('../../src/lint-command.js');
    expect(LINT_HELP).toContain('npm run tg-agent -- lint');
    expect(LINT_HELP.split('\n').filter((line) => line.length > 100)).toEqual([]);
  });
});
