/**
 * No credential reaches a log line, a listing or a metric, whatever option carries it. The agent runs as a process
 * with a distinct secret in every option and environment variable that can hold one (Pulsar token, HTTP token,
 * signing keys, Loki URL user-info and `?token=`, Loki password, broker admin URL user-info, RabbitMQ and Kafka
 * passwords) and an `mcp` entry with an auth token and a URL password (discovery on, its server away); Loki is a
 * VictoriaLogs that requires basic auth, reached through the credentials of the Loki URL. After a conversation, every
 * line on stdout and in Loki, and `/tools`, `/workflow`, `/metrics`, `/readyz` and `/healthz`, are searched for
 * every secret, raw or as JSON or a URL would spell it.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { agentFlowConfig, knowledgeQueryTool, mcpTool } from '../../dev/flow-config.js';
import { freePort } from '../../dev/ports.js';
import { startAgentHarness, type AgentHarness } from '../support/agent-harness.js';
import { configQueueArgs, startAgentProcess, type AgentProcess } from '../support/agent-process.js';
import { nativeUnavailable } from '../support/transports.js';
import { startVictoriaLogs, type VictoriaLogs } from '../support/victoria-logs.js';

const LOKI_USER = 'loki-pusher';
/** One distinct secret per place that can carry one. */
const SECRETS = {
  pulsarApiKey: 'pulsar-api-key-9f3a61c2d8e7',
  httpToken: 'http-token-5b2e9c0a71f4d3e8',
  signingKey: 'signing-key-c41d7e2f9a0b5c6d',
  signingKeyPrevious: 'signing-key-previous-83e1a9b07c2d',
  lokiUrlPassword: 'loki-url-pass-6d0c3f9e1a2b',
  lokiUrlToken: 'loki-url-token-2a7f5c9d0e1b',
  lokiPassword: 'loki-password-e8b3d1f07a4c',
  adminUrlPassword: 'admin-url-pass-1f9c7e3a5d0b',
  rabbitmqPassword: 'rabbitmq-password-7c3e0a9f2d1b',
  kafkaSaslPassword: 'kafka-sasl-password-4d8b2f6a0e9c',
  mcpAuthToken: 'mcp-auth-token-0e6a4c8f2b7d',
  mcpUrlPassword: 'mcp-url-pass-9b1d5f3c7e0a',
} as const;

/** The spellings of a secret that text could carry. */
const spellings = (secret: string): string[] => [secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64')];

function leaks(where: string, text: string): string[] {
  return Object.entries(SECRETS).flatMap(([name, secret]) => (spellings(secret).some((s) => text.includes(s)) ? [`${name} in ${where}`] : []));
}

describe('secrets never leave the process', () => {
  let harness: AgentHarness;
  let logs: VictoriaLogs;
  let agent: AgentProcess;
  let base: string;

  beforeAll(async () => {
    logs = await startVictoriaLogs({ basicAuth: { username: LOKI_USER, password: SECRETS.lokiUrlPassword } });
    harness = await startAgentHarness({
      webSocketUrl: inject('pulsarWebSocketUrl'),
      settings: { id: 'harness-idle' },
      tools: { kg: knowledgeQueryTool('kg'), remote: mcpTool('remote', 'away', []) },
      graphRag: () => 'It is sunny.',
      script: (terms) =>
        (terms.history as unknown[]).length === 0 ? 'Thought: ask\nAction: kg\nArgs: {"question": "weather?"}' : 'Thought: known\nFinal Answer: sunny',
    });
    await harness.removeFlow('default');
    await harness.addFlow('secrets');
    await harness.removeFlow('secrets');
    const closed = await freePort();
    await harness.config.put(harness.workspace, 'mcp', 'away', {
      url: `http://mcp-user:${SECRETS.mcpUrlPassword}@127.0.0.1:${closed}/mcp`,
      'auth-token': SECRETS.mcpAuthToken,
    });
    await harness.config.put(harness.workspace, 'processor:agent-manager', 'secrets', agentFlowConfig(harness.workspace, 'secrets'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const loki = new URL(logs.lokiPushUrl);
    loki.username = LOKI_USER;
    loki.password = SECRETS.lokiUrlPassword;
    loki.searchParams.set('token', SECRETS.lokiUrlToken);
    const admin = new URL(inject('pulsarWebServiceUrl'));
    admin.username = 'pulsar-admin';
    admin.password = SECRETS.adminUrlPassword;
    agent = startAgentProcess(
      [
        '--pulsar-host', inject('pulsarServiceUrl'),
        '-P', String(port),
        '--signing-key-previous', SECRETS.signingKeyPrevious,
        '--mcp-discovery',
        ...configQueueArgs(harness.settings),
        ...(nativeUnavailable ? ['--pulsar-ws-url', inject('pulsarWebSocketUrl')] : []),
      ],
      {
        env: {
          PULSAR_API_KEY: SECRETS.pulsarApiKey,
          PULSAR_ADMIN_URL: admin.toString(),
          TG_AGENT_HTTP_TOKEN: SECRETS.httpToken,
          TG_AGENT_SIGNING_KEY: SECRETS.signingKey,
          LOKI_URL: loki.toString(),
          // Without LOKI_USERNAME the URL's user-info is what authenticates; the password must stay hidden all the same.
          LOKI_PASSWORD: SECRETS.lokiPassword,
          RABBITMQ_PASSWORD: SECRETS.rabbitmqPassword,
          KAFKA_SASL_PASSWORD: SECRETS.kafkaSaslPassword,
          KAFKA_SASL_USERNAME: 'kafka-user',
          LOG_LEVEL: 'debug',
        },
      },
    );
    await harness.waitFor(() => agent.output.includes('Flow started') || agent.child.exitCode !== null, 'the flow to start', 90_000);
    expect(agent.child.exitCode, agent.output).toBeNull();
  }, 240_000);

  afterAll(async () => {
    if (agent && agent.child.exitCode === null) agent.child.kill('SIGKILL');
    await harness?.stop();
    await logs?.close();
  });

  it('pushes to a Loki that requires basic auth, with the credentials of the Loki URL', async () => {
    const result = await harness.ask({ question: 'weather?' }, { flow: 'secrets', timeoutMs: 30_000 });
    expect(result.last).toMatchObject({ message_type: 'answer', content: 'sunny', end_of_dialog: true });
    let found: Record<string, string>[] = [];
    for (const deadline = Date.now() + 20_000; found.length === 0 && Date.now() < deadline; ) {
      found = await logs.query('{processor="agent-manager"} msg:="Agent service started"');
      if (found.length === 0) await new Promise((r) => setTimeout(r, 250));
    }
    expect(found, agent.output).toHaveLength(1);
    expect(agent.output).not.toContain('Loki does not take our log lines');
  });

  it('shows no secret in any log line, listing, metric or probe', async () => {
    // MCP discovery has failed (and logged it) by now: the server's port is closed.
    await harness.waitFor(() => agent.output.includes('MCP discovery failed'), 'the failed MCP discovery to be logged', 30_000);
    const bearer = { authorization: `Bearer ${SECRETS.httpToken}` };
    const get = async (path: string, headers: Record<string, string> = {}) => {
      const response = await fetch(`${base}${path}`, { headers });
      return { status: response.status, body: await response.text() };
    };
    const answers: Record<string, { status: number; body: string }> = {
      '/tools': await get('/tools', bearer),
      [`/tools/${harness.workspace}`]: await get(`/tools/${harness.workspace}`, bearer),
      '/metrics': await get('/metrics'),
      '/readyz': await get('/readyz'),
      '/healthz': await get('/healthz'),
      ...Object.fromEntries(
        await Promise.all(['', '.svg', '.dot', '.mmd', '.json'].map(async (ext) => [`/workflow/${harness.workspace}${ext}`, await get(`/workflow/${harness.workspace}${ext}`, bearer)])),
      ),
    };
    for (const [path, { status }] of Object.entries(answers)) expect(status, path).toBe(200);
    // The listing names the mcp entry: its secrets were there to leak.
    expect(answers[`/tools/${harness.workspace}`]!.body).toContain('away');
    const lokiLines = await logs.query('{processor="agent-manager"}');
    expect(lokiLines.length).toBeGreaterThan(10);
    const found = [
      ...leaks('the process output', agent.output),
      ...leaks('Loki', JSON.stringify(lokiLines)),
      ...Object.entries(answers).flatMap(([path, { body }]) => leaks(path, body)),
    ];
    expect(found).toEqual([]);
  });
});
