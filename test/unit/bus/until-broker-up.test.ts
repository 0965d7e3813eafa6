import { describe, expect, it } from 'vitest';
import { ConnectError, CredentialsRefusedError, TransportError } from '../../../src/bus/errors.js';
import { brokerMayBeComingUp, untilBrokerUp } from '../../../src/bus/until-broker-up.js';

describe('untilBrokerUp', () => {
  it('takes a namespace or topic that does not exist yet as a broker still coming up, a refused token as final', () => {
    expect(brokerMayBeComingUp(new TransportError('connect ECONNREFUSED 127.0.0.1:6650', { retriable: true }))).toBe(true);
    // WebSocket: the upgrade's HTTP status; native: the C++ client's result, read where the binding's error is wrapped.
    expect(brokerMayBeComingUp(new ConnectError('cannot create consumer …: HTTP 404 Not Found: Namespace not found', 'ws://broker:8080', 404))).toBe(true);
    expect(brokerMayBeComingUp(new ConnectError('Failed to create consumer: TopicNotFound', 'pulsar://broker:6650', 404, { retriable: false }))).toBe(true);
    expect(brokerMayBeComingUp(new TransportError('Failed to create consumer: TopicNotFound', { retriable: false }))).toBe(false);
    expect(brokerMayBeComingUp(new CredentialsRefusedError('the broker refused the token given with --pulsar-api-key'))).toBe(false);
    expect(brokerMayBeComingUp(new TransportError('Failed to create consumer: AuthorizationError', { retriable: false }))).toBe(false);
  });

  it('retries until the step succeeds, and rejects at once on a final failure', async () => {
    let calls = 0;
    const signal = new AbortController().signal;
    const value = await untilBrokerUp(
      async () => {
        calls += 1;
        if (calls < 3) throw new ConnectError('HTTP 404 Not Found: Namespace not found', 'ws://broker:8080', 404);
        return 'up';
      },
      { signal, maxDelayMs: 10 },
    );
    expect([value, calls]).toEqual(['up', 3]);
    await expect(untilBrokerUp(async () => Promise.reject(new CredentialsRefusedError('refused')), { signal, maxDelayMs: 10 })).rejects.toThrow('refused');
  });
});
