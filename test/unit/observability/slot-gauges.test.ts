/** The autoscaling signal: the concurrency slots' use, read from the service's limit at each scrape. */
import { describe, expect, it } from 'vitest';
import { ConcurrencyLimit } from '../../../src/flow/concurrency-limit.js';
import { AgentMetrics } from '../../../src/observability/metrics.js';

const gauge = (text: string, name: string): number => Number(new RegExp(`^${name}\\{processor="agent-manager"\\} (\\S+)$`, 'm').exec(text)?.[1]);

describe('tg_agent_iterations_in_flight and tg_agent_queued_requests', () => {
  it('show the slots held and the requests waiting for one at the moment of the scrape', async () => {
    const metrics = new AgentMetrics('agent-manager', { defaultMetrics: false });
    const limit = new ConcurrencyLimit(2);
    metrics.scraped.watchSlots(() => limit);
    const release: (() => void)[] = [];
    const tasks = Array.from({ length: 5 }, () => limit.run(() => new Promise<void>((resolve) => release.push(resolve))));
    await new Promise((resolve) => setImmediate(resolve));

    let text = await metrics.registry.metrics();
    expect(gauge(text, 'tg_agent_iterations_in_flight')).toBe(2);
    expect(gauge(text, 'tg_agent_queued_requests')).toBe(3);

    while (release.length > 0 || limit.inFlight > 0) {
      release.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(tasks);
    text = await metrics.registry.metrics();
    expect(gauge(text, 'tg_agent_iterations_in_flight')).toBe(0);
    expect(gauge(text, 'tg_agent_queued_requests')).toBe(0);
  });
});
