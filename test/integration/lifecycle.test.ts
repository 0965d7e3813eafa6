/**
 * The built service as a separate process (`node dist/src/main.js`) against the real broker: it becomes
 * ready, answers, and on SIGTERM mid-conversation finishes the iteration in flight, then exits 0.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import { AskTimeoutError, startAgentHarness, type AgentHarness } from '../support/agent-harness.js';
import { agentFlowConfig, knowledgeQueryTool } from '../../dev/flow-config.js';
import { freePort } from '../../dev/ports.js';
import { nativeUnavailable } from '../support/transports.js';
import { configQueueArgs, startAgentProcess, type AgentProcess } from '../support/agent-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('the built service as a process', () => {
  let harness: AgentHarness;
  let agent: AgentProcess;
  let child: ChildProcess;
  let port: number;
  let releaseModel: () => void = () => {};
  const modelHeld = new Promise<void>((resolve) => (releaseModel = resolve));

  beforeAll(async () => {
    await promisify(execFile)('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT });

    // Stand-ins and config on the real broker. The harness's own in-process agent gets another id and its
    // flow is removed, so only the process under test consumes the flow's requests.
    harness = await startAgentHarness({
      webSocketUrl: inject('pulsarWebSocketUrl'),
      settings: { id: 'harness-idle' },
      tools: { a: knowledgeQueryTool('lookup', 'Look things up', { state: 'looked-up' }) },
      script: async (terms: PromptTerms) => {
        if ((terms.history as unknown[]).length > 0) return 'Thought: done\nFinal Answer: answered';
        await modelHeld; // the first LLM call is in flight until the test lets it finish
        return 'Thought: look it up\nAction: lookup\nArgs: {"question": "q"}';
      },
    });
    await harness.removeFlow('default');
    await harness.config.put(harness.workspace, 'processor:agent-manager', 'default', agentFlowConfig(harness.workspace, 'default'));

    port = await freePort();
    agent = startAgentProcess(
      [
        // --transport auto (the default): native where the binding loads, else WebSocket.
        '--pulsar-host', inject('pulsarServiceUrl'),
        '--pulsar-ws-url', inject('pulsarWebSocketUrl'),
        ...configQueueArgs(harness.settings),
        '-P', String(port),
        '--shutdown-grace', '20',
      ],
      { built: true },
    );
    child = agent.child;
    await harness.waitFor(() => agent.output.includes('Agent service started'), 'the process to start', 30_000);
  }, 120_000);

  afterAll(async () => {
    releaseModel();
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await harness?.stop();
  });

  it('reports ready over HTTP once its flow is subscribed', async () => {
    await harness.waitFor(() => agent.output.includes('Flow started'), 'the flow to start', 15_000);
    const response = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(response.status).toBe(200);
    const expected = nativeUnavailable === undefined ? 'native' : 'websocket';
    expect(await response.text()).toMatch(new RegExp(`^ready: config version \\d+, 1 flow\\(s\\); transport ${expected}\n$`));
    expect(agent.output).toContain(`"msg":"Transport: ${expected}, broker `);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    // Label order is not part of the exposition format: the processor label comes from the registry's defaults.
    expect(metrics).toMatch(
      new RegExp(`^tg_agent_transport_info\\{(?=[^}]*\\bprocessor="agent-manager")(?=[^}]*\\btransport="${expected}")[^}]*\\} 1$`, 'm'),
    );
  });

  it('finishes the in-flight iteration on SIGTERM and exits 0', async () => {
    const conversation = harness.ask({ question: 'q' }, { timeoutMs: 5_000 }).catch((error: unknown) => error);
    await harness.waitFor(() => harness.prompt.reactCalls().length === 1, 'the first LLM call', 10_000);

    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    child.kill('SIGTERM');
    await harness.waitFor(() => agent.output.includes('Stopping: no new requests'), 'the process to begin stopping', 10_000);
    expect(child.exitCode).toBeNull(); // still finishing the iteration
    releaseModel();

    const [code, signal] = await exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(agent.output).toContain('"msg":"Stopped"');

    // The iteration that was in flight completed: its thought, observation and `next` were all published.
    // The `next` iteration is not taken by the stopped process (in production another replica takes it).
    const outcome = await conversation;
    expect(outcome).toBeInstanceOf(AskTimeoutError);
    const { responses, nextRequests } = outcome as AskTimeoutError;
    // (the second explain is graph RAG's trace, handed on before the observation)
    expect(responses.map((r) => r.message_type)).toEqual(['explain', 'thought', 'explain', 'explain', 'observation', 'explain']);
    expect(nextRequests.map((r) => r.state)).toEqual(['looked-up']);
    expect(harness.graphRag.calls).toHaveLength(1);
  });
});
