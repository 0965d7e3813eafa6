import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createTransport } from '../../../src/create-transport.js';
import { loadSettings } from '../../../src/settings.js';

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
