import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/settings.js';
import { settingsSecrets } from '../../src/settings-secrets.js';
import { maskSecrets, withoutCredentials } from '../../src/errors/secret-text.js';

/** Every option that can carry a credential, by flag and by environment variable, each with its own secret. */
const BY_FLAG = [
  '--pulsar-api-key', 'flag-pulsar-key-1',
  '--http-token', 'flag-http-token-0123456',
  '--signing-key', 'flag-signing-key-0123456',
  '--signing-key-previous', 'flag-previous-key-0123456',
  '--loki-password', 'flag-loki-password',
  '--loki-url', 'http://loki-user:flag-loki-url-pass@loki:3100/loki/api/v1/push?token=flag-loki-token&tenant=team-a',
  '--rabbitmq-password', 'flag-rabbit-pass',
  '--kafka-sasl-password', 'flag-kafka-pass',
  '--pulsar-admin-url', 'http://admin:flag-admin-pass@pulsar:8080',
  '--pulsar-ws-url', 'ws://pulsar:8080?auth=flag-ws-auth',
];
const BY_ENV = {
  PULSAR_API_KEY: 'env-pulsar-key-1',
  TG_AGENT_HTTP_TOKEN: 'env-http-token-0123456',
  TG_AGENT_SIGNING_KEY: 'env-signing-key-0123456',
  TG_AGENT_SIGNING_KEY_PREVIOUS: 'env-previous-key-0123456',
  LOKI_PASSWORD: 'env-loki-password',
  LOKI_URL: 'http://loki-user:env-loki-url-pass@loki:3100/loki/api/v1/push?token=env-loki-token',
  RABBITMQ_PASSWORD: 'env-rabbit-pass',
  KAFKA_SASL_PASSWORD: 'env-kafka-pass',
  PULSAR_ADMIN_URL: 'http://admin:env-admin-pass@pulsar:8080',
  PULSAR_HOST: 'pulsar://user:env-pulsar-url-pass@pulsar:6650',
};

describe("the settings' credentials", () => {
  it('are every secret an option carries, given by flag or by environment variable', () => {
    const byFlag = settingsSecrets(loadSettings(BY_FLAG, {}).settings!);
    for (const secret of BY_FLAG.filter((_, i) => i % 2 === 1).flatMap((value) => value.match(/flag-[a-z0-9-]*[a-z0-9]/g) ?? [])) {
      expect(byFlag, secret).toContain(secret);
    }
    const byEnv = settingsSecrets(loadSettings([], BY_ENV).settings!);
    for (const secret of Object.values(BY_ENV).flatMap((value) => value.match(/env-[a-z0-9-]*[a-z0-9]/g) ?? [])) expect(byEnv, secret).toContain(secret);
  });

  it('leave out user names, ordinary query values and the well-known default RabbitMQ password', () => {
    const secrets = settingsSecrets(loadSettings(BY_FLAG.slice(10, 12), { RABBITMQ_PASSWORD: 'guest' }).settings!);
    expect(secrets).toEqual(['flag-loki-url-pass', 'flag-loki-token']);
    expect(settingsSecrets(loadSettings([], {}).settings!)).toEqual([]);
  });
});

describe('a URL with credentials', () => {
  it('gives them up as basic auth and keeps the rest, its query included', () => {
    expect(withoutCredentials('http://us%40er:p%3Ass@loki:3100/push?token=t1')).toEqual({
      url: 'http://loki:3100/push?token=t1',
      basicAuth: { username: 'us@er', password: 'p:ss' },
    });
    expect(withoutCredentials('http://loki:3100/push')).toEqual({ url: 'http://loki:3100/push' });
  });

  it('has its secrets masked as a JSON log line writes them too', () => {
    const secret = 'pa"ss\\word';
    expect(maskSecrets(JSON.stringify({ msg: `with ${secret}` }), [secret])).toBe('{"msg":"with ***"}');
  });
});
