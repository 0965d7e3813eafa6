/**
 * Token authentication, on a DEDICATED broker started once with it (tools/pulsar-standalone/pulsar.sh,
 * PULSAR_AUTH=token: a secret key made for this run and a token signed with it). On every transport that
 * loads here: the right token connects and carries messages; a wrong or missing one stops the start at once
 * with a message naming --pulsar-api-key, in-process and as the real process (exit code 1), instead of
 * reconnecting forever.
 */
import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTransport } from '../../src/create-transport.js';
import { CredentialsRefusedError } from '../../src/bus/errors.js';
import type { Transport } from '../../src/bus/transport.js';
import { loadSettings } from '../../src/settings.js';
import { startRestartableBroker, type RestartableBroker } from '../../dev/restartable-broker.js';
import { Inbox, uniqueName } from '../support/transport-contract.js';
import { testTransports, type TransportKind } from '../support/transports.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const logger = pino({ level: process.env.LOG_LEVEL ?? 'silent' });
let broker: RestartableBroker | undefined;

beforeAll(async () => {
  broker = await startRestartableBroker({ auth: 'token' });
  await promisify(execFile)('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT });
}, 240_000);

afterAll(async () => {
  await broker?.close();
}, 60_000);

function flags(kind: TransportKind, token: string | undefined): string[] {
  const b = broker as RestartableBroker;
  return ['--transport', kind, '--pulsar-host', b.serviceUrl, '--pulsar-ws-url', b.webSocketUrl, ...(token ? ['--pulsar-api-key', token] : [])];
}

function transportWith(kind: TransportKind, token: string | undefined): Promise<Transport> {
  const { settings } = loadSettings(flags(kind, token), {});
  if (!settings) throw new Error('no settings');
  return createTransport(settings, logger);
}

/** Runs the agent process; resolves with its exit code and output once it exits (or is killed after 60 s). */
function runAgent(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['dist/src/main.js', ...args, '-P', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe.each(testTransports())('a broker with token authentication [%s]', (kind) => {
  it('accepts the right token: produce and consume work', async () => {
    const token = (broker as RestartableBroker).token;
    expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    const transport = await transportWith(kind, token);
    try {
      const topic = `non-persistent://tg/request/${uniqueName('auth')}`;
      const inbox = new Inbox((m) => m.ack());
      await transport.subscribe({ topic, subscription: uniqueName('sub'), subscriptionType: 'Exclusive', handler: inbox.handler });
      const producer = await transport.createProducer(topic);
      await producer.send({ payload: Buffer.from('authenticated'), properties: { id: 'a-1' } });
      const [message] = await inbox.waitFor(1, 15_000);
      expect(message?.payload.toString()).toBe('authenticated');
      expect(transport.status().connected).toBe(true);
    } finally {
      await transport.close();
    }
  });

  it('refuses a wrong token at the start, naming --pulsar-api-key', async () => {
    const token = (broker as RestartableBroker).token as string;
    // Same role, signed with another key: the broker cannot verify it.
    const forged = `${token.split('.').slice(0, 2).join('.')}.${'A'.repeat(43)}`;
    const started = transportWith(kind, forged);
    await expect(started).rejects.toBeInstanceOf(CredentialsRefusedError);
    await expect(started).rejects.toThrow(/refused the token given with --pulsar-api-key \(PULSAR_API_KEY\)/);
  });

  it('refuses to start without a token, naming --pulsar-api-key', async () => {
    await expect(transportWith(kind, undefined)).rejects.toThrow(/requires authentication: set --pulsar-api-key \(PULSAR_API_KEY\)/);
  });

  it('the agent process exits with code 1 and says which option to fix', async () => {
    const { code, output } = await runAgent(flags(kind, 'not.a-valid.token'));
    expect(code).toBe(1);
    expect(output).toMatch(/tg-agent: cannot start: the broker at \S+ refused the token given with --pulsar-api-key/);
    expect(output).not.toContain('not.a-valid.token');
  });
});
