import { describe, expect, it } from 'vitest';
import { CredentialsRefusedError, TransportError } from '../../../src/bus/errors.js';
import { brokerMayBeComingUp, untilBrokerUp } from '../../../src/bus/until-broker-up.js';

describe('untilBrokerUp', () => {
  it('takes a namespace or topic that does not exist yet as a broker still coming up, a refused token as final', () => {
    expect(brokerMayBeComingUp(new TransportError('connect ECONNREFUSED 127.0.0.1:6650', { retriable: true }))).toBe(true);
    expect(brokerMayBeComingUp(new TransportError('cannot create consumer …: HTTP 404 Not Found: Namespace not found', { retriable: false }))).toBe(true);
    expect(brokerMayBeComingUp(new TransportError('Failed to create consumer: TopicNotFound', { retriable: false }))).toBe(true);
    expect(brokerMayBeComingUp(new CredentialsRefusedError('the broker refused the token given with --pulsar-api-key'))).toBe(false);
    expect(brokerMayBeComingUp(new TransportError('Failed to create consumer: AuthorizationError', { retriable: false }))).toBe(false);
  });

  it('retries until the step succeeds, and rejects at once on a final failure', async () => {
    let calls = 0;
    const signal = new AbortController().signal;
    const value = await untilBrokerUp(
      async () => {
        calls += 1;
        if (calls < 3) throw new TransportError('HTTP 404 Not Found: Namespace not found', { retriable: false });
        return 'up';
      },
      { signal, maxDelayMs: 10 },
    );
    expect([value, calls]).toEqual(['up', 3]);
    await expect(untilBrokerUp(async () => Promise.reject(new CredentialsRefusedError('refused')), { signal, maxDelayMs: 10 })).rejects.toThrow('refused');
  });
});
