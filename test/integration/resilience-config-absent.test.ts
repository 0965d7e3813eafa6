/**
 * The config service is absent when the agent starts (the whole app, HTTP endpoints included, on the real
 * broker): the agent keeps asking (TrustGraph retries every 2 s), `/readyz` answers 503 while nothing is
 * loaded and 200 once it is, `/healthz` answers 200 throughout, and requests are answered afterwards.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startAgentHarness, waitUntil, type AgentHarness } from '../support/agent-harness.js';
import { brokerUrls } from '../support/transport-contract.js';
import { freePort } from '../../dev/ports.js';

const { webSocketUrl } = brokerUrls();

async function get(url: string): Promise<{ status: number; body: string } | undefined> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return { status: response.status, body: await response.text() };
  } catch {
    return undefined; // not listening yet
  }
}

describe('config service absent at start (real broker, HTTP /readyz)', () => {
  let h: AgentHarness | undefined;

  afterAll(async () => {
    await h?.stop();
  });

  it('retries, answers /readyz 503 until the configuration is loaded, then 200, and serves requests', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    h = await startAgentHarness({ webSocketUrl, app: { metricsPort: port }, configAvailable: false, waitReady: false });
    const harness = h;

    let first: { status: number; body: string } | undefined;
    for (const deadline = Date.now() + 15_000; !first && Date.now() < deadline; ) {
      first = await get(`${base}/readyz`);
      if (!first) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(first).toEqual({
      status: 503,
      body: expect.stringMatching(/^not ready: configuration not loaded yet: waiting for (the broker|TrustGraph's config service)\b.*; transport websocket\n$/),
    });
    expect((await get(`${base}/healthz`))?.status).toBe(200);

    // The agent keeps asking the silent config service (each ask times out after 2 s, then 2 s pause).
    await waitUntil(() => harness.config.calls.length >= 2, 'a retried config request', 20_000);
    const stillDown = await get(`${base}/readyz`);
    expect(stillDown?.status).toBe(503);
    expect(stillDown?.body).toMatch(/waiting for TrustGraph's config service: no response to request/);
    expect(harness.service.readiness().ready).toBe(false);

    harness.config.available = true;
    const statuses: number[] = [];
    let ready: { status: number; body: string } | undefined;
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
      const answer = await get(`${base}/readyz`);
      if (answer) statuses.push(answer.status);
      if (answer?.status === 200) {
        ready = answer;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(ready?.body).toMatch(/^ready: config version \d+, 1 flow\(s\); transport websocket\n$/);
    // Only 503s before the first 200.
    expect(statuses.slice(0, -1).every((status) => status === 503)).toBe(true);
    await harness.started;

    const result = await harness.ask({ question: 'are you there?' });
    expect(result.last).toMatchObject({ message_type: 'answer', content: 'ok', end_of_dialog: true, error: null });
    expect((await get(`${base}/readyz`))?.status).toBe(200);
  });
});
