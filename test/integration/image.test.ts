/**
 * The tg-agent image in a real Docker engine (testcontainers), against this run's broker: it answers the spec's
 * §5.2 workflow asked the way TrustGraph's gateway asks, shows /readyz and /metrics to the host, reaches Docker's
 * `healthy`, runs as the non-root user on a read-only root filesystem, prints --help through `docker run`, and on
 * `docker stop` finishes the iteration in flight, then exits 0.
 *
 * The container shares the host's network: the test broker listens on 127.0.0.1 only, and the native transport
 * connects to the address the broker advertises. The compose test covers a bridge network.
 */
import { Readable } from 'node:stream';
import { GenericContainer, Wait, getContainerRuntimeClient, type StartedTestContainer } from 'testcontainers';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { agentFlowConfig } from '../../dev/flow-config.js';
import { freePort } from '../../dev/ports.js';
import type { PromptTerms } from '../../dev/stand-ins/prompt-service.js';
import { AskTimeoutError, startAgentHarness, type AgentHarness } from '../support/agent-harness.js';
import { builtImage, docker, dockerUnavailable } from '../support/docker-engine.js';
import { startGatewayClient, type GatewayClient } from '../support/gateway-client.js';
import { loadSpecExample, WORKFLOW_GROUPS, workflowScript } from '../support/spec-tools.js';
import { nativeUnavailable } from '../support/transports.js';

const unavailable = await dockerUnavailable();

/** testcontainers has no option for `--read-only`; its create options carry it. */
class ReadOnlyRootContainer extends GenericContainer {
  withReadOnlyRoot(): this {
    this.hostConfig.ReadonlyRootfs = true;
    return this;
  }
}

describe.skipIf(unavailable !== undefined)('the image in Docker', () => {
  let image: string;
  let harness: AgentHarness;
  let gateway: GatewayClient;
  let container: StartedTestContainer;
  let port: number;
  let logs = '';
  let releaseModel: () => void = () => {};
  const modelHeld = new Promise<void>((resolve) => (releaseModel = resolve));

  const script = async (terms: PromptTerms): Promise<string> => {
    if (String(terms.question).startsWith('hold') && (terms.history as unknown[]).length === 0) {
      await modelHeld; // this conversation's first model call is in flight until the test lets it finish
    }
    return workflowScript(terms);
  };

  beforeAll(async () => {
    image = await builtImage();
    // Stand-ins and config on the real broker; the harness's own agent gets another id and its flow is
    // removed, so only the container consumes the flow's requests.
    harness = await startAgentHarness({
      webSocketUrl: inject('pulsarWebSocketUrl'),
      settings: { id: 'harness-idle' },
      tools: loadSpecExample().tool,
      script,
      mcpTools: { 'analysis-server': () => 'analysed', 'workflow-server': () => 'reset' },
    });
    await harness.removeFlow('default');
    await harness.config.put(harness.workspace, 'processor:agent-manager', 'default', agentFlowConfig(harness.workspace, 'default'));
    gateway = await startGatewayClient({ transport: harness.transport, workspace: harness.workspace });

    port = await freePort();
    const s = harness.settings;
    container = await new ReadOnlyRootContainer(image)
      .withReadOnlyRoot()
      .withNetworkMode('host')
      // The HEALTHCHECK follows TG_AGENT_METRICS_PORT.
      .withEnvironment({ TG_AGENT_METRICS_PORT: String(port) })
      .withCommand([
        '--pulsar-host', inject('pulsarServiceUrl'),
        '--pulsar-ws-url', inject('pulsarWebSocketUrl'),
        '--config-request-queue', s.configRequestQueue,
        '--config-response-queue', s.configResponseQueue,
        '--config-push-queue', s.configPushQueue,
        '--shutdown-grace', '20',
      ])
      .withLogConsumer((stream: Readable) => stream.on('data', (chunk: Buffer) => (logs += chunk.toString())))
      .withWaitStrategy(Wait.forHealthCheck())
      .withStartupTimeout(120_000)
      .start();
    await harness.waitFor(() => logs.includes('Flow started'), 'the flow to start in the container', 30_000);
  }, 15 * 60_000);

  afterAll(async () => {
    releaseModel();
    await container?.stop({ timeout: 1_000, remove: true }).catch(() => undefined);
    await gateway?.close();
    await harness?.stop();
  });

  const inspect = async () => {
    const client = await getContainerRuntimeClient();
    return client.container.inspect(client.container.getById(container.getId()));
  };

  it('answers the §5.2 workflow asked the way the gateway asks', async () => {
    const id = await gateway.send({ question: 'Company X?', group: WORKFLOW_GROUPS, state: 'undefined' });
    await gateway.waitEnded([id], 30_000);
    const { responses } = gateway.conversation(id);
    expect(gateway.conversation(id).ends).toBe(1);
    expect(gateway.last(id)).toMatchObject({ message_type: 'answer', content: 'done', error: null });
    const observations = responses.filter((r) => r.message_type === 'observation').map((r) => r.content);
    expect(observations).toEqual([expect.any(String), 'analysed', 'reset']);
    expect(harness.mcp.calls.map((c) => c.name)).toEqual(['analysis-server', 'workflow-server']);
  });

  it('shows /readyz and /metrics to the host', async () => {
    const transport = nativeUnavailable === undefined || process.env.CI === 'true' ? 'native' : '(native|websocket)';
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.text()).toMatch(new RegExp(`^ready: config version \\d+, 1 flow\\(s\\); transport ${transport}\n$`));
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/^tg_agent_session_total\{[^}]*outcome="completed"[^}]*\} 1$/m);
    expect(metrics).toMatch(new RegExp(`^tg_agent_transport_info\\{[^}]*transport="${transport}"[^}]*\\} 1$`, 'm'));
  });

  it("reaches Docker's healthy, as the non-root user, on a read-only root filesystem", async () => {
    const info = await inspect();
    expect(info.State.Health?.Status).toBe('healthy');
    expect(info.HostConfig.ReadonlyRootfs).toBe(true);
    expect(info.Config.User).toBe('10001:10001');
    const uid = await container.exec(['sh', '-c', "awk '/^Uid:/ { print $2 }' /proc/1/status"]);
    expect(uid.output.trim()).toBe('10001');
    const write = await container.exec(['sh', '-c', 'touch /app/probe']);
    expect(write.exitCode).not.toBe(0);
    expect(write.output).toMatch(/Read-only file system/);
  });

  it('prints --help through docker run', async () => {
    const help = await docker(['run', '--rm', image, '--help']);
    expect(help).toMatch(/^Usage: tg-agent \[options\]/);
    expect(help).toContain('--pulsar-host');
  });

  it('on docker stop finishes the iteration in flight, then exits 0', async () => {
    const conversation = harness
      .ask({ question: 'hold: Company X?', group: WORKFLOW_GROUPS, state: 'undefined' }, { timeoutMs: 8_000 })
      .catch((error: unknown) => error);
    await harness.waitFor(() => harness.prompt.reactCalls().some((c) => String(c.terms.question).startsWith('hold')), 'the held model call', 10_000);

    const stopped = container.stop({ timeout: 30_000, remove: false });
    await harness.waitFor(() => logs.includes('Stopping: no new requests'), 'the container to begin stopping', 10_000);
    expect((await inspect()).State.Running).toBe(true); // still finishing the iteration
    releaseModel();
    await stopped;

    const info = await inspect();
    expect({ running: info.State.Running, exitCode: info.State.ExitCode, oomKilled: info.State.OOMKilled }).toEqual({
      running: false,
      exitCode: 0,
      oomKilled: false,
    });
    expect(logs).toContain('"msg":"Stopped"');
    // The iteration in flight completed: its thought, observation and `next` request were published; the
    // next iteration is another replica's.
    const outcome = await conversation;
    expect(outcome).toBeInstanceOf(AskTimeoutError);
    const { responses, nextRequests } = outcome as AskTimeoutError;
    expect(responses.map((r) => r.message_type)).toContain('observation');
    expect(nextRequests.map((r) => r.state)).toEqual(['analysis']);
    await docker(['rm', container.getId()]);
  });
});
