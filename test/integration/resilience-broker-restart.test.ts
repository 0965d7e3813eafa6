/**
 * Broker loss mid-conversation, on a DEDICATED broker (not the run's shared one): two agents and their
 * stand-ins run on it, conversations are parked at known points, the broker is stopped and started again on
 * the same ports, and every conversation must end — with an answer or an error — once it is back.
 *
 * "Hangs" here means: no end_of_dialog from the agent within the conversation's remaining request timeouts
 * plus a grace period after the broker is back. TrustGraph's request and response topics are non-persistent,
 * so a message published while its subscriber is away is lost by design; the test therefore releases the
 * stand-ins' replies only once the gateway's subscription is back, and checks that the agent itself never
 * drops a conversation it was processing.
 *
 *  - agent "patient" (request timeout longer than the outage): conversations waiting on an MCP tool reply and
 *    on a prompt reply across the restart get their replies once the stand-ins are released, and end with
 *    answers within a grace period (consumers re-subscribed under the same names, producers re-created);
 *  - agent "hasty" (request timeout 6 s, send timeout 2 s): conversations whose MCP tool never answers time out
 *    DURING the outage, so the agent must publish the observation and the `next` message while the broker is
 *    away: it retries the publish and hands `next` over only once its own subscription is back;
 *  - a tool added while the broker is down, whose push is lost, reaches the agent (the configuration is read
 *    again after a reconnect);
 *  - readiness goes not-ready during the outage and ready after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentHarness, waitUntil, type AgentHarness } from '../support/agent-harness.js';
import { knowledgeQueryTool, mcpTool } from '../support/flow-config.js';
import { startGatewayClient, type GatewayClient } from '../support/gateway-client.js';
import { startRestartableBroker, type RestartableBroker } from '../support/restartable-broker.js';
import { testTransports } from '../support/transports.js';
import type { PromptScript } from '../stand-ins/prompt-service.js';

/** Longer than any outage here (a loaded machine may take a minute to restart the broker). */
const PATIENT_TIMEOUT_S = 300;
const HASTY_TIMEOUT_S = 6;
const GRACE_MS = 20_000;
const PER_KIND = 4;

interface Gate {
  promise: Promise<void>;
  open(): void;
}

function gate(): Gate {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Records every change of `service.readiness().ready`. */
function watchReadiness(h: AgentHarness): { states: boolean[]; stop(): void } {
  const states: boolean[] = [h.service.readiness().ready];
  const timer = setInterval(() => {
    const ready = h.service.readiness().ready;
    if (states.at(-1) !== ready) states.push(ready);
  }, 25);
  return { states, stop: () => clearInterval(timer) };
}

describe.each(testTransports())('broker stopped and restarted mid-conversation (dedicated broker) [%s]', (transportKind) => {
  let broker: RestartableBroker | undefined;
  let patient: AgentHarness | undefined;
  let hasty: AgentHarness | undefined;
  let patientGateway: GatewayClient | undefined;
  let hastyGateway: GatewayClient | undefined;
  const slowTool = gate();
  const slowPrompt = gate();

  /**
   * The model: "use <tool>" calls the tool once, then answers with its observation; "think" answers at once
   * once `slowPrompt` opens. Second iterations are answered only while the stand-ins' (and gateway's)
   * connection is whole, so the final answer cannot be published into a subscription that is not back yet.
   */
  const script =
    (harness: () => AgentHarness | undefined): PromptScript =>
    async (terms) => {
      const question = String(terms.question);
      const history = terms.history as { observation: string }[];
      const tool = /use (\w+)/.exec(question)?.[1];
      if (history.length > 0) {
        await waitUntil(() => harness()?.transport.status().connected === true, 'the stand-ins to reconnect', 60_000);
        return `Thought: done\nFinal Answer: ${history[0]?.observation ?? ''}`;
      }
      if (tool) return `Thought: I will use ${tool}\nAction: ${tool}\nArgs: {"n": "${question}"}`;
      await slowPrompt.promise;
      return 'Thought: I can answer directly\nFinal Answer: thought it over';
    };

  // The stand-ins wait for the broker instead of failing their sends.
  const fastReconnect = { reconnect: { initialDelayMs: 50, maxDelayMs: 500 }, sendTimeoutMs: 90_000 };

  beforeAll(async () => {
    broker = await startRestartableBroker();
    patient = await startAgentHarness({
      transport: transportKind,
      webSocketUrl: broker.webSocketUrl,
      serviceUrl: broker.serviceUrl,
      script: script(() => patient),
      tools: { slow: mcpTool('slow', 'slow-mcp', [{ name: 'n', type: 'string', description: 'anything' }]) },
      mcpTools: {
        'slow-mcp': async (params) => {
          await slowTool.promise;
          return `slow result for ${String((params as { n?: unknown }).n)}`;
        },
      },
      settings: { requestTimeoutSeconds: PATIENT_TIMEOUT_S, concurrency: 16 },
      transportOptions: fastReconnect,
      nativeTransportOptions: { sendTimeoutMs: fastReconnect.sendTimeoutMs },
      agentTransportOptions: { reconnect: { initialDelayMs: 100, maxDelayMs: 1000 } },
    });
    hasty = await startAgentHarness({
      transport: transportKind,
      webSocketUrl: broker.webSocketUrl,
      serviceUrl: broker.serviceUrl,
      script: script(() => hasty),
      tools: { lost: mcpTool('lost', 'lost-mcp', [{ name: 'n', type: 'string', description: 'anything' }]) },
      // Never answers: the call times out while the broker is down.
      mcpTools: { 'lost-mcp': () => new Promise(() => undefined) },
      settings: { requestTimeoutSeconds: HASTY_TIMEOUT_S, concurrency: 16 },
      transportOptions: fastReconnect,
      nativeTransportOptions: { sendTimeoutMs: fastReconnect.sendTimeoutMs },
      agentTransportOptions: { reconnect: { initialDelayMs: 100, maxDelayMs: 1000 }, sendTimeoutMs: 2000 },
      agentNativeTransportOptions: { sendTimeoutMs: 2000 },
    });
    patientGateway = await startGatewayClient({ transport: patient.transport, workspace: patient.workspace });
    hastyGateway = await startGatewayClient({ transport: hasty.transport, workspace: hasty.workspace });
  }, 180_000);

  afterAll(async () => {
    slowTool.open();
    slowPrompt.open();
    await patientGateway?.close();
    await hastyGateway?.close();
    await patient?.stop();
    await hasty?.stop();
    await broker?.close();
  }, 120_000);

  it('every in-flight conversation ends once the broker is back; readiness and config recover', async () => {
    const p = patient as AgentHarness;
    const q = hasty as AgentHarness;
    const pg = patientGateway as GatewayClient;
    const qg = hastyGateway as GatewayClient;
    const b = broker as RestartableBroker;

    const toolIds = await Promise.all(Array.from({ length: PER_KIND }, (_, i) => pg.send({ question: `use slow ${i}` })));
    const promptIds = await Promise.all(Array.from({ length: PER_KIND }, (_, i) => pg.send({ question: `think ${i}` })));
    const lostIds = await Promise.all(Array.from({ length: PER_KIND }, (_, i) => qg.send({ question: `use lost ${i}` })));
    // Parked: every tool call and every held prompt call has reached its stand-in.
    await waitUntil(() => p.mcp.calls.length === PER_KIND, 'the slow tool calls', 15_000);
    await waitUntil(() => p.prompt.calls.filter((c) => String(c.terms.question).startsWith('think')).length === PER_KIND, 'the held prompt calls', 15_000);
    await waitUntil(() => q.mcp.calls.length === PER_KIND, 'the lost tool calls', 15_000);

    const patientReadiness = watchReadiness(p);
    const hastyReadiness = watchReadiness(q);
    try {
      await b.stop();
      expect(p.service.readiness().ready).toBe(false);
      expect(q.service.readiness().ready).toBe(false);
      expect(p.service.readiness().detail).toMatch(/broker connection/);
      // A tool added while the broker is down, whose push is lost (as a push published while the agent's
      // subscription is away is on the non-persistent topic): the config service answers again only later.
      p.config.available = false;
      await p.putTool('added', knowledgeQueryTool('added-during-outage'));

      await b.start();
      const backAt = Date.now();
      await waitUntil(
        () => p.transport.status().connected && q.transport.status().connected && p.service.readiness().ready && q.service.readiness().ready,
        'both agents and their stand-ins to reconnect',
        30_000,
      );
      p.config.available = true;
      slowTool.open();
      slowPrompt.open();

      // Released replies flow at once: nothing is left to time out on the patient agent.
      await pg.waitEnded([...toolIds, ...promptIds], GRACE_MS);
      // The hasty agent: its remaining waits (a prompt call) are bounded by its request timeout.
      await qg.waitEnded(lostIds, Math.max(0, backAt + 2 * HASTY_TIMEOUT_S * 1000 + GRACE_MS - Date.now()));
      await new Promise((resolve) => setTimeout(resolve, 1000));

      for (const [i, id] of toolIds.entries()) {
        expect(pg.conversation(id).ends).toBe(1);
        expect(pg.last(id)).toMatchObject({ message_type: 'answer', content: `slow result for use slow ${i}`, error: null });
      }
      for (const id of promptIds) {
        expect(pg.conversation(id).ends).toBe(1);
        expect(pg.last(id)).toMatchObject({ message_type: 'answer', content: 'thought it over', error: null });
      }
      for (const id of lostIds) {
        expect(qg.conversation(id).ends).toBe(1);
        const last = qg.last(id);
        // The tool timed out during the outage; the observation says so and the model answered with it — or,
        // if the second prompt request went out before the prompt stand-in re-subscribed, that call timed out,
        // or (an outage longer than the publish retry window) publishing gave up: an error either way.
        if (last.message_type === 'answer') {
          expect(last.content).toMatch(new RegExp(`^Error: no response to request \\S+ on \\S+mcp-tool\\S+ within ${HASTY_TIMEOUT_S * 1000} ms`));
        } else {
          expect(last).toMatchObject({ message_type: 'error', error: { type: 'agent-error' } });
          expect(last.error?.message).toMatch(/no response to request .* within|not connected after|connection is not whole/);
        }
      }

      // Readiness: ready → not ready (outage) → ready.
      for (const states of [patientReadiness.states, hastyReadiness.states]) {
        expect(states[0]).toBe(true);
        expect(states).toContain(false);
        expect(states.at(-1)).toBe(true);
      }
    } finally {
      patientReadiness.stop();
      hastyReadiness.stop();
    }

    // The change made during the outage reached the agent (a lost push is made up for by the re-read).
    await waitUntil(
      () => p.service.registries.get(p.workspace).tools.some((t) => t.name === 'added-during-outage'),
      'the tool added during the outage to be loaded',
      15_000,
    );
    // Pushes flow again, and new conversations work on both agents.
    await p.putTool('added-later', knowledgeQueryTool('added-after-restart'));
    await p.configApplied(15_000);
    expect(p.service.registries.get(p.workspace).tools.map((t) => t.name)).toContain('added-after-restart');
    expect((await p.ask({ question: 'use slow again' })).last).toMatchObject({ message_type: 'answer', content: 'slow result for use slow again' });
    expect((await q.ask({ question: 'think fresh' })).last).toMatchObject({ message_type: 'answer', content: 'thought it over' });
  }, 300_000);
});
