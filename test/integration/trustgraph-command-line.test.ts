/**
 * tg-agent started the way TrustGraph starts its agent. Every flag that TrustGraph 2.11.1's
 * `agent-manager-react` and `agent-orchestrator` accept (read from their own `--help`, in the venv of
 * scripts/trustgraph-venv.sh) is accepted here, with TrustGraph's meaning where tg-agent has one. The process,
 * started with the parameters TrustGraph's deployment templates give `agent-manager` (id, concurrency,
 * pub/sub backend and host, log level) and Loki on, answers a request on TrustGraph's default config queues,
 * and its logs are found in a Loki-compatible server (VictoriaLogs) by TrustGraph's labels.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { agentFlowConfig } from '../../dev/flow-config.js';
import { freePort } from '../../dev/ports.js';
import { runCommand } from '../../dev/trustgraph-pieces.js';
import { loadSettings, OPTIONS, SettingsError } from '../../src/settings.js';
import { startAgentHarness, type AgentHarness } from '../support/agent-harness.js';
import { startAgentProcess, type AgentProcess } from '../support/agent-process.js';
import { nativeUnavailable } from '../support/transports.js';
import { startVictoriaLogs, type VictoriaLogs } from '../support/victoria-logs.js';


/** The flags in an argparse `--help` text's options section (`-p`, `--pulsar-host`, ...). */
function argparseFlags(help: string): string[] {
  const options = help.slice(help.indexOf('options:'));
  return [...new Set([...options.matchAll(/^ {2}(-[^\n]*?)(?: {2,}|\n)/gm)].flatMap((m) => [...(m[1] ?? '').matchAll(/(--?[a-zA-Z][\w-]*)/g)].map((f) => f[1]!)))];
}

/** TrustGraph's agent command line with a sample value for each of its flags (its own defaults where it shows one). */
const TRUSTGRAPH_ARGS: readonly string[] = [
  '--id', 'agent-manager',
  '--pubsub-backend', 'pulsar',
  '--pulsar-host', 'pulsar://pulsar:6650',
  '--pulsar-admin-url', 'http://pulsar:8080',
  '--pulsar-api-key', 'a-token',
  '--pulsar-listener', 'internal',
  '--rabbitmq-host', 'rabbitmq',
  '--rabbitmq-port', '5672',
  '--rabbitmq-username', 'guest',
  '--rabbitmq-password', 'guest',
  '--rabbitmq-vhost', '/',
  '--kafka-bootstrap-servers', 'kafka:9092',
  '--kafka-security-protocol', 'PLAINTEXT',
  '--kafka-sasl-mechanism', 'PLAIN',
  '--kafka-sasl-username', 'user',
  '--kafka-sasl-password', 'secret',
  '--log-level', 'WARNING',
  '--loki-enabled',
  '--loki-url', 'http://loki:3100/loki/api/v1/push',
  '--loki-username', 'loki-user',
  '--loki-password', 'loki-secret',
  '--config-push-queue', 'notify:tg:config',
  '--concurrency', '3',
  '--config-timeout', '45',
  '--metrics',
  '--metrics-port', '8001',
  '--librarian-timeout', '90',
  '--prompt-timeout', '300',
  '--max-iterations', '12',
  '--config-type', 'agent-context',
];

describe("TrustGraph's agent command line", () => {
  for (const program of ['agent-manager-react', 'agent-orchestrator']) {
    it(`accepts every flag of TrustGraph 2.11.1's ${program}`, async () => {
      const { stdout } = await runCommand(program, ['--help']);
      const theirs = argparseFlags(stdout).filter((flag) => flag !== '-h' && flag !== '--help');
      expect(theirs.length).toBeGreaterThanOrEqual(29);
      const ours = new Set(OPTIONS.flatMap((o) => [`--${o.flag}`, ...(o.short ? [`-${o.short}`] : []), ...(o.boolean ? [`--no-${o.flag}`] : [])]));
      expect(theirs.filter((flag) => !ours.has(flag))).toEqual([]);
      // The sample command line below names every one of them (by its long name).
      const named = theirs.filter((flag) => flag.startsWith('--') && flag !== '--no-loki-enabled' && flag !== '--no-metrics');
      expect(named.filter((flag) => !TRUSTGRAPH_ARGS.includes(flag))).toEqual([]);
    });
  }

  it("maps TrustGraph's flags onto tg-agent's settings", () => {
    const { settings } = loadSettings([...TRUSTGRAPH_ARGS], {});
    expect(settings).toMatchObject({
      id: 'agent-manager',
      pubsubBackend: 'pulsar',
      pulsarHost: 'pulsar://pulsar:6650',
      brokerAdminUrl: 'http://pulsar:8080',
      pulsarApiKey: 'a-token',
      pulsarListener: 'internal',
      logLevel: 'warn',
      lokiEnabled: true,
      lokiUrl: 'http://loki:3100/loki/api/v1/push',
      lokiUsername: 'loki-user',
      lokiPassword: 'loki-secret',
      configPushQueue: 'notify:tg:config',
      concurrency: 3,
      configTimeoutSeconds: 45,
      metrics: true,
      metricsPort: 8001,
      librarianTimeoutSeconds: 90,
      promptTimeoutSeconds: 300,
      maxIterations: 12,
      configType: 'agent-context',
      rabbitmqPort: 5672,
      kafkaSaslMechanism: 'PLAIN',
    });
    // TrustGraph's environment variables, with its names.
    const fromEnv = loadSettings([], {
      PUBSUB_BACKEND: 'pulsar',
      PULSAR_HOST: 'pulsar://broker:6650',
      PULSAR_ADMIN_URL: 'http://broker:8080',
      LOKI_URL: 'http://logs:3100/loki/api/v1/push',
      LOKI_USERNAME: 'u',
      LOKI_PASSWORD: 'p',
      RABBITMQ_HOST: 'mq',
      KAFKA_BOOTSTRAP_SERVERS: 'k:9092',
    }).settings;
    expect(fromEnv).toMatchObject({
      pulsarHost: 'pulsar://broker:6650',
      brokerAdminUrl: 'http://broker:8080',
      lokiEnabled: true,
      lokiUrl: 'http://logs:3100/loki/api/v1/push',
      rabbitmqHost: 'mq',
      kafkaBootstrapServers: 'k:9092',
    });
    // --no-loki-enabled wins over LOKI_URL; a flag of either admin-URL name wins over the environment.
    expect(loadSettings(['--no-loki-enabled'], { LOKI_URL: 'http://logs:3100' }).settings?.lokiEnabled).toBe(false);
    expect(loadSettings(['--broker-admin-url', 'http://flag:8080'], { PULSAR_ADMIN_URL: 'http://env:8080' }).settings?.brokerAdminUrl).toBe('http://flag:8080');
    // Loki stays off outside a TrustGraph deployment unless asked for.
    expect(loadSettings([], {}).settings?.lokiEnabled).toBe(false);
  });

  it('takes kafka and rabbitmq with their options, refuses a Kafka security option it cannot honour, and names the values it knows', () => {
    const kafka = loadSettings([], { PUBSUB_BACKEND: 'kafka', KAFKA_BOOTSTRAP_SERVERS: 'k1:9092,k2:9092', KAFKA_SECURITY_PROTOCOL: 'SASL_SSL', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' }).settings;
    expect(kafka).toMatchObject({ pubsubBackend: 'kafka', kafkaBootstrapServers: 'k1:9092,k2:9092', kafkaSecurityProtocol: 'SASL_SSL', kafkaMaxMessageBytes: 1_000_000 });
    expect(() => loadSettings(['--pubsub-backend', 'kafka', '--kafka-security-protocol', 'SASL_SSL'], {})).toThrow(SettingsError);
    expect(() => loadSettings(['--pubsub-backend', 'kafka', '--kafka-sasl-mechanism', 'GSSAPI', '--kafka-security-protocol', 'SASL_PLAINTEXT'], {})).toThrow(/--kafka-sasl-mechanism GSSAPI: expected PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512/);
    const rabbit = loadSettings(['--pubsub-backend', 'rabbitmq', '--rabbitmq-host', 'mq', '--rabbitmq-port', '5673'], { RABBITMQ_VHOST: 'tg' }).settings;
    expect(rabbit).toMatchObject({ pubsubBackend: 'rabbitmq', rabbitmqHost: 'mq', rabbitmqPort: 5673, rabbitmqVhost: 'tg', rabbitmqUsername: 'guest' });
    expect(() => loadSettings(['--pubsub-backend', 'nats'], {})).toThrow(/--pubsub-backend \(PUBSUB_BACKEND\): .*"pulsar"\|"kafka"\|"rabbitmq"/);
  });

  describe('the process, started as TrustGraph starts agent-manager, with Loki on', () => {
    let harness: AgentHarness;
    let logs: VictoriaLogs;
    let agent: AgentProcess;
    let port: number;

    beforeAll(async () => {
      logs = await startVictoriaLogs();
      harness = await startAgentHarness({
        webSocketUrl: inject('pulsarWebSocketUrl'),
        configQueues: 'trustgraph',
        settings: { id: 'harness-idle' },
        script: () => 'Thought: known\nFinal Answer: answered by the agent TrustGraph started',
      });
      await harness.removeFlow('default');
      await harness.addFlow('tg-cli');
      await harness.removeFlow('tg-cli');
      await harness.config.put(harness.workspace, 'processor:agent-manager', 'tg-cli', agentFlowConfig(harness.workspace, 'tg-cli'));
      port = await freePort();
      agent = startAgentProcess([
        // TrustGraph's templates: the processor-group parameters of agent-manager, as flags.
        '--id', 'agent-manager',
        '--concurrency', '1',
        '--pubsub-backend', 'pulsar',
        '--pulsar-host', inject('pulsarServiceUrl'),
        '--log-level', 'INFO',
        // Where this test's broker and Loki are (TrustGraph's defaults name the cluster's hosts).
        '--pulsar-admin-url', inject('pulsarWebServiceUrl'),
        '--loki-enabled',
        '--loki-url', logs.lokiPushUrl,
        '-P', String(port),
        // Without the native binding, tg-agent speaks Pulsar's WebSocket API, which needs its URL.
        ...(nativeUnavailable ? ['--pulsar-ws-url', inject('pulsarWebSocketUrl')] : []),
      ]);
      await harness.waitFor(() => agent.output.includes('Flow started') || agent.child.exitCode !== null, 'the flow to start', 60_000);
      expect(agent.child.exitCode, agent.output).toBeNull();
    }, 180_000);

    afterAll(async () => {
      if (agent && agent.child.exitCode === null) agent.child.kill('SIGKILL');
      await harness?.stop();
      await logs?.close();
    });

    it('answers a request and serves its metrics', async () => {
      const result = await harness.ask({ question: 'who started you?' }, { flow: 'tg-cli', timeoutMs: 20_000 });
      expect(result.answer).toBe('answered by the agent TrustGraph started');
      expect(result.last.error).toBeNull();
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics).toMatch(/^tg_agent_session_total\{[^}]*\bprocessor="agent-manager"[^}]*\} [1-9]/m);
    });

    it("pushes its logs to Loki under TrustGraph's labels: processor, severity, instance", async () => {
      let found: Record<string, string>[] = [];
      for (const deadline = Date.now() + 15_000; found.length === 0 && Date.now() < deadline; ) {
        found = await logs.query('{processor="agent-manager", severity="info"} msg:="Agent service started"');
        if (found.length === 0) await new Promise((r) => setTimeout(r, 250));
      }
      expect(found, agent.output).toHaveLength(1);
      expect(found[0]!._stream).toMatch(/^\{(?=.*\binstance="[0-9a-f]{8}")(?=.*\bprocessor="agent-manager")(?=.*\bseverity="info").*\}$/);
      const warnings = await logs.query('{processor="agent-manager", severity="warning"}');
      // The one query finds every line of the process: here, its requests' lines too.
      const all = await logs.query('{processor="agent-manager"}');
      expect(all.length).toBeGreaterThan(found.length + warnings.length);
      expect(agent.output).not.toContain('Loki does not take our log lines');
    });
  });
});
