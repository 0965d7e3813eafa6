// Where `npm run local`'s stack runs, as `tg-agent lint` (without --file) and `npm run ask` find it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { withLocalStack } from '../../../src/lint-command.js';
import { localStackArgs, localStackFile, readLocalStack } from '../../../src/local-stack.js';

describe('the local stack file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'local-stack-'));
  const env = { TG_AGENT_LOCAL_DIR: dir };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(() => vi.restoreAllMocks());

  it('is in TG_AGENT_LOCAL_DIR when set; none there is no stack, nor is a file that is not JSON', () => {
    expect(localStackFile(env)).toBe(join(dir, 'local.json'));
    expect(readLocalStack(env)).toBeUndefined();
    writeFileSync(localStackFile(env), '{"webSocketUrl": ');
    expect(readLocalStack(env)).toBeUndefined();
  });

  it('gives lint the options of the recorded broker when none is given, and leaves given ones alone', () => {
    writeFileSync(localStackFile(env), JSON.stringify({ backend: 'pulsar', transport: 'websocket', serviceUrl: 'pulsar://127.0.0.1:46650', webSocketUrl: 'ws://127.0.0.1:48080' }));
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    expect(withLocalStack(['--workspace-x'], env)).toEqual([
      '--transport', 'websocket', '--pulsar-host', 'pulsar://127.0.0.1:46650', '--pulsar-ws-url', 'ws://127.0.0.1:48080', '--workspace-x',
    ]);
    expect(withLocalStack(['--pulsar-host', 'pulsar://elsewhere:6650'], env)).toEqual(['--pulsar-host', 'pulsar://elsewhere:6650']);
    expect(withLocalStack([], { ...env, PULSAR_HOST: 'pulsar://elsewhere:6650' })).toEqual([]);
  });

  it('reaches a RabbitMQ or Kafka stack with that backend', () => {
    expect(localStackArgs({ backend: 'kafka', kafkaBootstrapServers: '127.0.0.1:49092' })).toEqual(['--pubsub-backend', 'kafka', '--kafka-bootstrap-servers', '127.0.0.1:49092']);
    expect(localStackArgs({ backend: 'rabbitmq', rabbitmqUrl: 'amqp://u:p@127.0.0.1:45672/v' })).toEqual([
      '--pubsub-backend', 'rabbitmq', '--rabbitmq-host', '127.0.0.1', '--rabbitmq-port', '45672', '--rabbitmq-username', 'u', '--rabbitmq-password', 'p', '--rabbitmq-vhost', 'v',
    ]);
  });
});
