/**
 * Where the tests' and `npm run local`'s broker comes from (dev/broker.ts) when a Docker engine answers but
 * no registry does: a Docker broker that cannot start falls back to the Maven launcher and says so, unless
 * `PULSAR_SOURCE=docker` insists on Docker.
 */
import { describe, expect, it, vi } from 'vitest';
import { BrokerUnavailableError, startBroker } from '../../dev/broker.js';
import { dockerUnavailable } from '../support/docker-engine.js';

const unavailable = await dockerUnavailable();
/** An image no registry or local store has. */
const ABSENT = 'tg-agent-local/absent-pulsar:0';

function envWithout(...names: string[]): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of names) delete env[name];
  return env;
}

describe.skipIf(unavailable !== undefined)('the broker source with a Docker engine and no image', () => {
  it('falls back to the Maven launcher, saying which broker it started and why', async () => {
    const said: string[] = [];
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      said.push(String(chunk));
      return true;
    });
    let broker: Awaited<ReturnType<typeof startBroker>> | undefined;
    try {
      broker = await startBroker({ ...envWithout('PULSAR_URL', 'PULSAR_WEB_URL', 'PULSAR_SOURCE'), PULSAR_IMAGE: ABSENT });
    } finally {
      write.mockRestore();
    }
    try {
      expect(broker.source).toBe('launcher');
      expect(broker.description).toMatch(/Maven Central jars/);
      expect(said.join('')).toMatch(new RegExp(`a Docker engine answers, but Pulsar's image ${ABSENT} did not start \\(.+\\); starting Pulsar from Maven Central jars`));
      const tenants = await fetch(`${broker.webServiceUrl}/admin/v2/tenants`);
      expect(await tenants.json()).toContain('tg');
    } finally {
      await broker.stop();
    }
  }, 240_000);

  it('PULSAR_SOURCE=docker insists: no fallback, an error naming the image', async () => {
    const started = startBroker({ ...envWithout('PULSAR_URL', 'PULSAR_WEB_URL'), PULSAR_SOURCE: 'docker', PULSAR_IMAGE: ABSENT });
    await expect(started).rejects.toThrow(BrokerUnavailableError);
    await expect(started).rejects.toThrow(`PULSAR_SOURCE=docker: a Docker engine answers, but Pulsar's image ${ABSENT} did not start`);
  });

  it('PULSAR_SOURCE takes docker or launcher only', async () => {
    await expect(startBroker({ ...envWithout('PULSAR_URL', 'PULSAR_WEB_URL'), PULSAR_SOURCE: 'kubernetes' })).rejects.toThrow(
      'PULSAR_SOURCE must be docker or launcher, got "kubernetes"',
    );
  });
});
