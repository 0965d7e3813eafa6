/**
 * The agent started before the broker, as in any cluster start: the process (`src/main.ts`) is pointed at a
 * broker that refuses connections for 60 s. Meanwhile it keeps running, `/healthz` answers 200 and `/readyz`
 * 503 saying it waits for the broker; no stack trace is printed. Once the broker accepts connections the agent
 * is ready and has answered its first request within 10 s. SIGTERM stops a waiting agent at once.
 * On every transport that loads here, both at once.
 */
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { agentFlowConfig } from '../../dev/flow-config.js';
import { freePort } from '../../dev/ports.js';
import { startAgentHarness, type AgentHarness } from '../support/agent-harness.js';
import { configQueueArgs, startAgentProcess, type AgentProcess } from '../support/agent-process.js';
import { lateBroker, type LateBroker } from '../support/late-broker.js';
import { testTransports, type TransportKind } from '../support/transports.js';

const BROKER_LATE_MS = 60_000;
/** The issue an operator has: how long after the broker is up until the agent answers. */
const ANSWERED_WITHIN_MS = 10_000;

interface LateAgent {
  readonly kind: TransportKind;
  readonly flow: string;
  readonly broker: LateBroker;
  readonly port: number;
  readonly process: AgentProcess;
}

async function http(port: number, path: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: response.status, body: await response.text() };
}

/** Resolves once `path` answers `status`; rejects after `timeoutMs` naming what was last seen. */
async function untilStatus(port: number, path: string, status: number, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  for (;;) {
    const answer = await http(port, path).catch((error: unknown) => ({ status: 0, body: String(error) }));
    if (answer.status === status) return;
    last = `${answer.status} ${answer.body.trim()}`;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last ${path}: ${last}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('the agent started before the broker', () => {
  let harness: AgentHarness;
  const agents: LateAgent[] = [];

  const startAgent = (kind: TransportKind, broker: LateBroker, port: number, id: string): AgentProcess =>
    startAgentProcess([
      '--id', id,
      '--transport', kind,
      '--pulsar-host', broker.serviceUrl,
      '--pulsar-ws-url', broker.webSocketUrl,
      ...configQueueArgs(harness.settings),
      '-P', String(port),
      '--shutdown-grace', '5',
    ]);

  beforeAll(async () => {
    // Stand-ins and config on the real broker; the harness's own agent has no flow of its own.
    harness = await startAgentHarness({
      webSocketUrl: inject('pulsarWebSocketUrl'),
      settings: { id: 'harness-idle' },
      script: () => 'Thought: I know this\nFinal Answer: answered once the broker came up',
    });
    await harness.removeFlow('default');
    for (const kind of testTransports()) {
      const flow = `late-${kind}`;
      const id = `tg-agent-late-${kind}`;
      await harness.addFlow(flow); // the flow's stand-ins ...
      await harness.removeFlow(flow); // ... served by the process under test, not the harness's agent
      await harness.config.put(harness.workspace, `processor:${id}`, flow, agentFlowConfig(harness.workspace, flow));
      const broker = await lateBroker({ serviceUrl: inject('pulsarServiceUrl'), webSocketUrl: inject('pulsarWebSocketUrl') });
      const port = await freePort();
      agents.push({ kind, flow, broker, port, process: startAgent(kind, broker, port, id) });
    }
  }, 120_000);

  afterAll(async () => {
    for (const agent of agents) {
      if (agent.process.child.exitCode === null) agent.process.child.kill('SIGKILL');
      await agent.broker.close();
    }
    await harness?.stop();
  });

  it(
    `waits ${BROKER_LATE_MS / 1000} s for the broker, healthy and not ready, then answers within ${ANSWERED_WITHIN_MS / 1000} s of it`,
    async () => {
      const started = Date.now();
      const seen = new Map<TransportKind, Set<string>>(agents.map((a) => [a.kind, new Set()]));
      while (Date.now() - started < BROKER_LATE_MS) {
        await new Promise((resolve) => setTimeout(resolve, 5_000));
        for (const agent of agents) {
          expect(agent.process.child.exitCode, `${agent.kind}: exited while waiting\n${agent.process.output}`).toBeNull();
          const health = await http(agent.port, '/healthz').catch(() => undefined);
          if (!health) continue; // tsx still starting
          expect(health.status).toBe(200);
          const ready = await http(agent.port, '/readyz');
          expect(ready.status, ready.body).toBe(503);
          expect(ready.body).toMatch(new RegExp(`^not ready: configuration not loaded yet: waiting for the broker.*; transport ${agent.kind}\\n$`));
          seen.get(agent.kind)?.add(ready.body);
        }
      }
      for (const agent of agents) {
        expect(seen.get(agent.kind)?.size, `${agent.kind}: /readyz never answered while waiting\n${agent.process.output}`).toBeGreaterThan(0);
        expect(agent.process.output).toContain('Broker not reachable yet; trying again in');
      }

      await Promise.all(agents.map((agent) => agent.broker.open()));
      const opened = Date.now();
      const outcomes = await Promise.all(
        agents.map(async (agent) => {
          await untilStatus(agent.port, '/readyz', 200, `${agent.kind}: ready after the broker came up\n${agent.process.output}`, ANSWERED_WITHIN_MS);
          const left = ANSWERED_WITHIN_MS - (Date.now() - opened);
          const result = await harness.ask({ question: 'is anyone there?' }, { flow: agent.flow, timeoutMs: Math.max(left, 1) });
          return { kind: agent.kind, answer: result.answer, error: result.last.error, afterMs: Date.now() - opened };
        }),
      );
      for (const outcome of outcomes) {
        expect(outcome, JSON.stringify(outcome)).toMatchObject({ answer: 'answered once the broker came up', error: null });
      }
      console.log(`first answers after the broker came up: ${outcomes.map((o) => `${o.kind} ${o.afterMs} ms`).join(', ')}`);
      for (const agent of agents) {
        expect(agent.process.child.exitCode).toBeNull();
        // Warnings say what is wrong; no stack trace is printed (a pino `err` object would carry one).
        expect(agent.process.output).not.toMatch(/\n\s+at .+\(.+:\d+:\d+\)/);
        expect(agent.process.output).not.toContain('"stack":');
      }
    },
    BROKER_LATE_MS + 60_000,
  );

  it('stops at once on SIGTERM while waiting for a broker that never comes', async () => {
    const broker = await lateBroker({ serviceUrl: inject('pulsarServiceUrl'), webSocketUrl: inject('pulsarWebSocketUrl') });
    try {
      for (const kind of testTransports()) {
        const port = await freePort();
        const agent = startAgent(kind, broker, port, `tg-agent-never-${kind}`);
        const { child } = agent;
        await untilStatus(port, '/healthz', 200, `${kind}: serving /healthz`, 30_000);
        const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
        child.kill('SIGTERM');
        const [code, signal] = await Promise.race([
          exited,
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${kind}: still running 5 s after SIGTERM\n${agent.output}`)), 5_000)),
        ]);
        expect({ kind, code, signal }).toEqual({ kind, code: 0, signal: null });
        expect(agent.output).toContain('"msg":"Stopped"');
        expect(agent.output).not.toMatch(/\n\s+at .+\(.+:\d+:\d+\)/);
      }
    } finally {
      await broker.close();
    }
  }, 90_000);
});
