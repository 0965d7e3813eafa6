import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { shownBroker } from '../../../src/bus/index.js';
import { createTransport } from '../../../src/create-transport.js';
import { loadSettings } from '../../../src/settings.js';

describe('the broker as logs show it', () => {
  it('hides user-info and the query, and keeps a cluster named by its brokers', () => {
    expect(shownBroker('pulsar+ssl://user:s3cret@broker:6651')).toBe('pulsar+ssl://***@broker:6651');
    expect(shownBroker('wss://broker:8443/ws?token=abc&x=1')).toBe('wss://broker:8443/ws?…');
    expect(shownBroker('pulsar://pulsar:6650')).toBe('pulsar://pulsar:6650');
    // A cluster named by its brokers, as the native client and kafkajs take it.
    expect(shownBroker('pulsar://127.0.0.1:6650,127.0.0.1:6651')).toBe('pulsar://127.0.0.1:6650,127.0.0.1:6651');
    expect(shownBroker('kafka://a:9092,b:9092,c:9092')).toBe('kafka://a:9092,b:9092,c:9092');
    expect(shownBroker('pulsar://u:pw@a:6650,b:6650/?token=x')).toBe('pulsar://***@a:6650,b:6650/?…');
  });
});

describe('createTransport', () => {
  it('takes the WebSocket transport when asked for it, and logs the transport and the redacted broker URL', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const settings = loadSettings(['--transport', 'websocket', '--pulsar-ws-url', 'ws://u:pw@127.0.0.1:1'], {}).settings;
    const transport = await createTransport(settings!, logger);
    expect(transport.kind).toBe('websocket');
    await transport.close();
    expect(lines.join('')).toContain('"msg":"Transport: websocket, broker ws://***@127.0.0.1:1"');
    expect(lines.join('')).not.toContain('pw');
  });
});
