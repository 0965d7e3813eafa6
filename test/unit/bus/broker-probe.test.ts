import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BrokerProbe } from '../../../src/bus/broker-probe.js';
import { MemoryTransport } from '../../../src/bus/memory/memory-transport.js';

const TOPIC = 'non-persistent://tg/request/agent-manager-liveness';

describe('BrokerProbe', () => {
  let bus: MemoryTransport;
  let probe: BrokerProbe;

  afterEach(async () => {
    vi.useRealTimers();
    await probe.stop();
    await bus.close();
  });

  it('is responsive while probes are acknowledged, unresponsive once one has waited past the timeout, and recovers', async () => {
    // A fake clock (the bus's own deliveries are not timers): time passes when the test says.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] });
    bus = new MemoryTransport();
    probe = new BrokerProbe({ transport: bus, topic: TOPIC, timeoutMs: 40, logger: pino({ level: 'silent' }) });
    probe.start();
    expect(probe.state()).toEqual({ responsive: true });
    // Probes are acknowledged: however long we look, it stays responsive.
    for (let ms = 0; ms < 1_000; ms += 20) {
      await vi.advanceTimersByTimeAsync(20);
      expect(probe.state()).toEqual({ responsive: true });
    }

    bus.dropConnection();
    await vi.waitFor(() => expect(probe.state().responsive).toBe(false), { timeout: 5000 });
    expect(probe.state().detail).toMatch(
      /^the broker has not acknowledged a probe message on non-persistent:\/\/tg\/request\/agent-manager-liveness for \d+ s \(limit 0.04 s; last failure: memory transport: not connected/,
    );

    bus.restoreConnection();
    await vi.waitFor(() => expect(probe.state()).toEqual({ responsive: true }), { timeout: 5000 });
  });

  it('refuses a timeout that is not a positive number', () => {
    bus = new MemoryTransport();
    probe = new BrokerProbe({ transport: bus, topic: TOPIC, timeoutMs: 1, logger: pino({ level: 'silent' }) });
    expect(() => new BrokerProbe({ transport: bus, topic: TOPIC, timeoutMs: 0, logger: pino({ level: 'silent' }) })).toThrow(/timeoutMs/);
  });
});
