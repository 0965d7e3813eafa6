/**
 * The agent started before the broker, as in any cluster start: the process (`src/main.ts`) is pointed at a
 * broker of its own that is started 60 s later (a real Pulsar, from the local launcher, whose ports open before
 * its namespaces exist). Meanwhile the agent keeps running, `/healthz` answers 200 and `/readyz` 503 saying it
 * waits for the broker; no stack trace is printed. Once the broker is ready (and TrustGraph's services, the
 * stand-ins, are up on it) the agent becomes ready and answers its first request; the time that takes is printed
 * (a figure, not a bound: a loaded machine stretches it). SIGTERM stops a waiting agent at once. On every transport
 * that loads here, both at once.
 */
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentFlowConfig, agentFlowTopics } from '../../dev/flow-config.js';
import { flowSubscriptionName, queueToTopic } from '../../src/bus/topics.js';
import { untilSubscriptionHasPermits } from '../support/failure-report.js';
import { freePort } from '../../dev/ports.js';
import { startAgentHarness, type AgentHarness } from '../support/agent-harness.js';
import { configQueueArgs, startAgentProcess, type AgentProcess } from '../support/agent-process.js';
import { startRestartableBroker, type RestartableBroker } from '../../dev/restartable-broker.js';
import { testTransports, type TransportKind } from '../support/transports.js';

const BROKER_LATE_MS = 60_000;
/**
 * How long the test waits, after the broker is up, for each agent to be ready and answer: long enough that only an
 * agent that never comes back fails, on a machine at any load; the time it took is printed.
 */
const ANSWER_WAIT_MS = 120_000;

interface LateAgent {
  readonly kind: TransportKind;
  readonly id: string;
  readonly flow: string;
  readonly port: number;
  readonly process: AgentProcess;
}

async function http(port: number, path: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: response.status, body: await response.text() };
}

/** Resolves once `path` answers `status`; rejects after `timeoutMs` naming what was last seen. */
async function untilStatus(port: number, path: string, status: number, what: string | (() => string), timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  for (;;) {
    const answer = await http(port, path).catch((error: unknown) => ({ status: 0, body: String(error) }));
    if (answer.status === status) return;
    last = `${answer.status} ${answer.body.trim()}`;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}; last ${path}: ${last}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('the agent started before the broker', () => {
  let harness: AgentHarness | undefined;
  let broker: RestartableBroker;
  const agents: LateAgent[] = [];
  /** The config queues of this test's config stand-in (TrustGraph's names, on a broker of its own). */
  const queues = { configRequestQueue: 'request:tg:config', configResponseQueue: 'response:tg:config', configPushQueue: 'notify:tg:config' };

  const startAgent = (kind: TransportKind, urls: { serviceUrl: string; webSocketUrl: string }, port: number, id: string): AgentProcess =>
    startAgentProcess([
      '--id', id,
      '--transport', kind,
      '--pulsar-host', urls.serviceUrl,
      '--pulsar-ws-url', urls.webSocketUrl,
      '--broker-admin-url', 'none',
      ...configQueueArgs(queues),
      '-P', String(port),
      '--shutdown-grace', '5',
    ]);

  beforeAll(async () => {
    broker = await startRestartableBroker({ started: false });
    for (const kind of testTransports()) {
      const id = `tg-agent-late-${kind}`;
      const port = await freePort();
      agents.push({ kind, id, flow: `late-${kind}`, port, process: startAgent(kind, broker, port, id) });
    }
  }, 60_000);

  afterAll(async () => {
    for (const agent of agents) if (agent.process.child.exitCode === null) agent.process.child.kill('SIGKILL');
    await harness?.stop();
    await broker?.close();
  }, 120_000);

  it(
    `waits ${BROKER_LATE_MS / 1000} s for the broker, healthy and not ready, then becomes ready and answers`,
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
        expect(agent.process.output).toContain('Broker not ready for the agent yet; trying again in');
      }

      await broker.start();
      const brokerReady = Date.now();
      // TrustGraph's services come up on the broker: the config service (TrustGraph's queues), the flows.
      const h = (harness = await startAgentHarness({
        webSocketUrl: broker.webSocketUrl,
        serviceUrl: broker.serviceUrl,
        configQueues: 'trustgraph',
        settings: { id: 'harness-idle' },
        script: () => 'Thought: I know this\nFinal Answer: answered once the broker came up',
      }));
      await h.removeFlow('default');
      for (const agent of agents) {
        await h.addFlow(agent.flow); // the flow's stand-ins ...
        await h.removeFlow(agent.flow); // ... served by the process under test, not the harness's agent
        await h.config.put(h.workspace, `processor:${agent.id}`, agent.flow, agentFlowConfig(h.workspace, agent.flow));
      }
      const servicesUp = Date.now();
      const outcomes = await Promise.all(
        agents.map(async (agent) => {
          const left = (): number => ANSWER_WAIT_MS - (Date.now() - brokerReady);
          await untilStatus(agent.port, '/readyz', 200, () => `${agent.kind}: ready after the broker came up (exit ${agent.process.child.exitCode})\n${agent.process.output}`, Math.max(left(), 1));
          // A subscribe is answered before the broker holds the consumer's flow permits, and a non-persistent
          // topic drops what no consumer has permits for: the first request waits for them, as a client would
          // retry one lost in that moment (a loaded machine widens it).
          const topic = queueToTopic(agentFlowTopics(h.workspace, agent.flow).request!);
          await untilSubscriptionHasPermits(broker.webServiceUrl, topic, flowSubscriptionName(agent.id, h.workspace, agent.flow, 'request'), Math.max(left(), 1));
          const result = await h.ask({ question: 'is anyone there?' }, { flow: agent.flow, timeoutMs: Math.max(left(), 1) });
          return { kind: agent.kind, answer: result.answer, error: result.last.error, afterMs: Date.now() - brokerReady };
        }),
      );
      console.log(
        `broker ready → TrustGraph's services up ${servicesUp - brokerReady} ms; first answers: ${outcomes.map((o) => `${o.kind} ${o.afterMs} ms`).join(', ')}`,
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
    BROKER_LATE_MS + ANSWER_WAIT_MS + 180_000,
  );

  it('stops at once on SIGTERM while waiting for a broker that never comes', async () => {
    const nowhere = { serviceUrl: `pulsar://127.0.0.1:${await freePort()}`, webSocketUrl: `ws://127.0.0.1:${await freePort()}` };
    for (const kind of testTransports()) {
      const port = await freePort();
      const agent = startAgent(kind, nowhere, port, `tg-agent-never-${kind}`);
      const { child } = agent;
      // The process's start (tsx compiling src/) is what this waits for; a loaded machine can take long.
      await untilStatus(port, '/healthz', 200, `${kind}: serving /healthz`, 90_000);
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
  }, 240_000);
});
