/**
 * No input buys more memory than its size: 300 requests of 3.5 MB reach an agent process whose one concurrency slot
 * is held (the prompt service never answers). Those that fit under `--max-queued-bytes` wait for the slot; every
 * other one is refused at once with an "overloaded" error response. The queue never holds more than the bound,
 * and the process's resident memory stays under the bound plus a fixed overhead (without the bound it grew by the
 * whole burst: ~1 GB). The figures are printed for docs/benchmarks.md; the test asserts the bound on queued bytes,
 * the refusals and the memory ceiling, never a time. Native transport only: a 3.5 MB request is over what the
 * WebSocket API carries.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { agentFlowConfig } from '../../dev/flow-config.js';
import { freePort } from '../../dev/ports.js';
import { startAgentHarness, type AgentHarness, type FlowStandIns } from '../support/agent-harness.js';
import { configQueueArgs, startAgentProcess, type AgentProcess } from '../support/agent-process.js';
import { startGatewayClient, type GatewayClient } from '../support/gateway-client.js';
import { sample, scrape } from '../support/prometheus-text.js';
import { testTransports } from '../support/transports.js';

const MB = 1024 * 1024;
const MAX_QUEUED_BYTES = 100 * MB;
const REQUESTS = 300;
const REQUEST_BYTES = 3.5 * 1000 * 1000;
/** What the process may hold beyond the queued requests: its code, heap, buffers, the broker client. */
const FIXED_OVERHEAD = 450 * MB;

describe.runIf(testTransports().includes('native'))('a burst of large requests against --max-queued-bytes (real broker, native)', () => {
  let harness: AgentHarness;
  let burst: FlowStandIns;
  let agent: AgentProcess;
  let gateway: GatewayClient;
  let metricsUrl: string;
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));

  beforeAll(async () => {
    harness = await startAgentHarness({
      transport: 'native',
      webSocketUrl: inject('pulsarWebSocketUrl'),
      settings: { id: 'harness-idle' },
      // The prompt service takes the first request and never answers while the burst arrives.
      script: async () => {
        await held;
        return 'Thought: done\nFinal Answer: ok';
      },
    });
    await harness.removeFlow('default');
    burst = await harness.addFlow('burst');
    await harness.removeFlow('burst');
    await harness.config.put(harness.workspace, 'processor:agent-manager', 'burst', agentFlowConfig(harness.workspace, 'burst'));
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}`;
    agent = startAgentProcess([
      '--transport', 'native',
      '--pulsar-host', inject('pulsarServiceUrl'),
      '--pulsar-admin-url', inject('pulsarWebServiceUrl'),
      '-P', String(port),
      '--concurrency', '1',
      '--request-timeout', '600',
      '--max-queued-bytes', String(MAX_QUEUED_BYTES),
      ...configQueueArgs(harness.settings),
    ]);
    await harness.waitFor(() => agent.output.includes('Flow started') || agent.child.exitCode !== null, 'the flow to start', 90_000);
    expect(agent.child.exitCode, agent.output).toBeNull();
    gateway = await startGatewayClient({ transport: harness.transport, workspace: harness.workspace, flow: 'burst' });
  }, 240_000);

  afterAll(async () => {
    release();
    await gateway?.close();
    if (agent && agent.child.exitCode === null) agent.child.kill('SIGKILL');
    await harness?.stop();
  }, 60_000);

  it('queues what fits under the bound, refuses the rest at once, and keeps its memory under the bound plus a fixed overhead', async () => {
    const metric = async (name: string) => sample(await scrape(metricsUrl), name, { processor: 'agent-manager' }) ?? 0;
    const rssBefore = await metric('process_resident_memory_bytes');
    const question = 'x'.repeat(REQUEST_BYTES);
    const first = await gateway.send({ question });
    await harness.waitFor(() => burst.prompt.calls.length === 1, 'the first request to take the only slot', 60_000);

    const ids: string[] = [];
    let peakQueued = 0;
    let peakRss = 0;
    for (let i = 1; i < REQUESTS; i++) {
      ids.push(await gateway.send({ question }));
      if (i % 25 === 0) {
        peakQueued = Math.max(peakQueued, await metric('tg_agent_queued_request_bytes'));
        peakRss = Math.max(peakRss, await metric('process_resident_memory_bytes'));
      }
    }
    const fits = Math.floor(MAX_QUEUED_BYTES / (REQUEST_BYTES + 200));
    const refusedExpected = REQUESTS - 1 - fits;
    // Every request over the bound is answered at once with one "overloaded" error.
    for (const deadline = Date.now() + 120_000; (await metric('tg_agent_overload_refusals_total')) < refusedExpected && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 250));
    }
    const queuedBytes = await metric('tg_agent_queued_request_bytes');
    peakQueued = Math.max(peakQueued, queuedBytes);
    peakRss = Math.max(peakRss, await metric('process_resident_memory_bytes'));
    const refusals = await metric('tg_agent_overload_refusals_total');
    const queued = await metric('tg_agent_queued_requests');
    console.log(
      `[queued-bytes] ${REQUESTS} requests of ${REQUEST_BYTES} bytes, --max-queued-bytes ${MAX_QUEUED_BYTES}: ${queued} queued ` +
        `(${queuedBytes} bytes), ${refusals} refused; RSS ${Math.round(rssBefore / MB)} MiB before, peak ${Math.round(peakRss / MB)} MiB`,
    );
    expect(queued + refusals).toBe(REQUESTS - 1);
    expect(refusals).toBeGreaterThanOrEqual(refusedExpected);
    expect(queuedBytes).toBeLessThanOrEqual(MAX_QUEUED_BYTES);
    expect(peakQueued).toBeLessThanOrEqual(MAX_QUEUED_BYTES);
    expect(peakRss).toBeLessThan(MAX_QUEUED_BYTES + FIXED_OVERHEAD);
    await gateway.waitEnded(ids.slice(-10), 60_000);
    for (const id of ids.slice(-10)) {
      expect(gateway.last(id).error?.message).toMatch(/^the agent is overloaded: \d+ requests holding \d+ bytes are waiting .*--max-queued-bytes/);
    }
    // Once the slot is free, the queued ones are answered.
    release();
    await gateway.waitEnded([first], 60_000);
    expect(gateway.last(first)).toMatchObject({ message_type: 'answer', content: 'ok' });
  }, 600_000);
});
