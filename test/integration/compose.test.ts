/**
 * docker-compose.yml and deploy/trustgraph-compose-snippet.yml under a real compose tool (Debian's
 * docker-compose): both validate, the snippet merges into a TrustGraph compose file as its comments say, and
 * docker-compose.yml brought up with images built here (deploy/local-images/docker-compose.local.yml) runs the
 * agent, which answers a request over the compose network's broker, and Prometheus, which scrapes it.
 *
 * The stack publishes docker-compose.yml's fixed host ports (6650, 8080, 8000, 9090).
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ensureTgTopology } from '../../dev/broker.js';
import { agentFlowConfig } from '../../dev/flow-config.js';
import { startAgentHarness, type AgentHarness } from '../support/agent-harness.js';
import { builtImage, dockerUnavailable } from '../support/docker-engine.js';
import { startGatewayClient, type GatewayClient } from '../support/gateway-client.js';
import { loadSettings } from '../../src/settings.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const unavailable = await dockerUnavailable();
const PROJECT = `tgacompose${process.pid}`;
const FILES = ['-f', 'docker-compose.yml', '-f', 'deploy/local-images/docker-compose.local.yml'];
const HOST_PORTS = [6650, 8080, 8000, 9090];

async function compose(args: readonly string[], timeoutMs = 60_000): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)('docker-compose', [...args], { cwd: ROOT, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`docker-compose ${args.join(' ')} failed:\n${stderr ?? ''}${stdout ?? ''}`, { cause: error });
  }
}

async function text(url: string): Promise<string> {
  try {
    return await (await fetch(url, { signal: AbortSignal.timeout(5_000) })).text();
  } catch (error) {
    return `(no answer: ${(error as Error).message})`;
  }
}

/** Calls `read` until `done` holds for what it returns (every 500 ms); throws with the last answer after `timeoutMs`. */
async function eventually(read: () => Promise<string>, done: (value: string) => boolean, what: string, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = await read();
  while (!done(last)) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms; the last answer was ${last.slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    last = await read();
  }
  return last;
}

/** Resolves with the ports of `ports` that something on this machine already listens on. */
async function portsInUse(ports: readonly number[]): Promise<number[]> {
  const taken = await Promise.all(
    ports.map(
      (port) =>
        new Promise<boolean>((resolve) => {
          const server = createServer()
            .once('error', () => resolve(true))
            .listen(port, '0.0.0.0', () => server.close(() => resolve(false)));
        }),
    ),
  );
  return ports.filter((_, i) => taken[i]);
}

describe.skipIf(unavailable !== undefined)('the compose files under docker-compose', () => {
  it('validates docker-compose.yml, alone and with the local-images override', async () => {
    const merged = parse(await compose([...FILES, 'config'])) as { services: Record<string, { image?: string }> };
    expect(Object.keys(merged.services).sort()).toEqual(['agent', 'grafana', 'prometheus', 'pulsar']);
    expect(merged.services.pulsar?.image).toBe('tg-agent-local/pulsar:4.0.7');
    expect(merged.services.prometheus?.image).toBe('tg-agent-local/prometheus:trixie');
    await compose(['-f', 'docker-compose.yml', 'config', '-q']);
  });

  it('merges the TrustGraph snippet into a TrustGraph compose file: the agent added, the broker given the WebSocket API and a healthcheck', async () => {
    // The shape of TrustGraph's generated broker service (its templates start `bin/pulsar broker`).
    const trustgraph = [
      'services:',
      '  pulsar:',
      '    image: docker.io/apachepulsar/pulsar:4.0.7',
      '    command: ["sh", "-c", "bin/apply-config-from-env.py conf/broker.conf && exec bin/pulsar broker"]',
      '    environment: { PULSAR_MEM: "-Xms600M -Xmx600M" }',
    ].join('\n');
    const file = `${ROOT}.pulsar/trustgraph-compose-${process.pid}.yaml`;
    const { writeFile, rm } = await import('node:fs/promises');
    await writeFile(file, trustgraph);
    try {
      type Service = { image?: string; command?: string[]; environment?: Record<string, string>; healthcheck?: { test?: string[] } };
      const merged = parse(await compose(['-f', file, '-f', 'deploy/trustgraph-compose-snippet.yml', 'config'])) as { services: Record<string, Service> };
      const agent = merged.services['agent-manager'];
      expect(agent?.image).toBe('tg-agent:latest');
      expect(agent?.environment).toMatchObject({ TG_AGENT_ID: 'agent-manager', PULSAR_HOST: 'pulsar://pulsar:6650' });
      const pulsar = merged.services.pulsar;
      expect(pulsar?.command?.at(-1)).toContain('exec bin/pulsar broker'); // TrustGraph's own settings stay
      expect(pulsar?.environment).toEqual({ PULSAR_MEM: '-Xms600M -Xmx600M', PULSAR_PREFIX_webSocketServiceEnabled: 'true' });
      expect(pulsar?.healthcheck?.test?.join(' ')).toContain('/admin/v2/tenants/tg');
    } finally {
      await rm(file, { force: true });
    }
  });

  const backends = [
    {
      name: 'RabbitMQ',
      service: 'rabbitmq',
      image: 'docker.io/rabbitmq:4-management',
      environment: { PUBSUB_BACKEND: 'rabbitmq', RABBITMQ_HOST: 'rabbitmq', RABBITMQ_PORT: '5672' },
      settings: { pubsubBackend: 'rabbitmq', rabbitmqHost: 'rabbitmq', rabbitmqPort: 5672, rabbitmqVhost: '/' },
    },
    {
      name: 'Kafka',
      service: 'kafka',
      image: 'docker.io/apache/kafka:4.1.1',
      environment: { PUBSUB_BACKEND: 'kafka', KAFKA_BOOTSTRAP_SERVERS: 'kafka:9092' },
      settings: { pubsubBackend: 'kafka', kafkaBootstrapServers: 'kafka:9092', kafkaSecurityProtocol: 'PLAINTEXT' },
    },
  ];
  for (const backend of backends) {
    it(`merges the ${backend.name} snippet into a TrustGraph compose file on ${backend.name}: the agent added, on that backend`, async () => {
      const trustgraph = ['services:', `  ${backend.service}:`, `    image: ${backend.image}`].join('\n');
      const file = `${ROOT}.pulsar/trustgraph-${backend.service}-compose-${process.pid}.yaml`;
      const { writeFile, rm } = await import('node:fs/promises');
      await writeFile(file, trustgraph);
      try {
        type Service = { image?: string; environment?: Record<string, string>; depends_on?: Record<string, unknown> };
        const snippet = `deploy/trustgraph-compose-${backend.service}-snippet.yml`;
        const merged = parse(await compose(['-f', file, '-f', snippet, 'config'])) as { services: Record<string, Service> };
        const agent = merged.services['agent-manager'];
        expect(agent?.environment).toMatchObject(backend.environment);
        expect(Object.keys(agent?.depends_on ?? {})).toEqual([backend.service]);
        expect(merged.services[backend.service]?.image).toBe(backend.image);
        // What the agent makes of that environment: the backend, on TrustGraph's broker service.
        const { settings } = loadSettings([], agent?.environment ?? {});
        expect(settings).toMatchObject(backend.settings);
      } finally {
        await rm(file, { force: true });
      }
    });
  }

  describe('brought up with images built here', () => {
    let harness: AgentHarness | undefined;
    let gateway: GatewayClient | undefined;

    beforeAll(async () => {
      const image = await builtImage();
      process.env.TG_AGENT_IMAGE = image;
      await promisify(execFile)('bash', ['scripts/image/local-images.sh'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
      const taken = await portsInUse(HOST_PORTS);
      if (taken.length > 0) throw new Error(`docker-compose.yml publishes ports ${HOST_PORTS.join(', ')}, but ${taken.join(', ')} in use here`);
      // Grafana has no Debian package, so no local image.
      await compose(['-p', PROJECT, ...FILES, 'up', '-d', '--no-build', 'pulsar', 'agent', 'prometheus'], 5 * 60_000);
      // TrustGraph's bootstrapper makes the tenant and namespaces; here the test does.
      await ensureTgTopology('http://127.0.0.1:8080');
      // TrustGraph's services, as stand-ins on the host, through the broker's published WebSocket port; the
      // harness's own agent has another id and no flow, so the compose agent serves the flow.
      harness = await startAgentHarness({
        webSocketUrl: 'ws://127.0.0.1:8080',
        configQueues: 'trustgraph',
        settings: { id: 'harness-idle' },
        script: () => 'Thought: I know this\nFinal Answer: from the compose stack',
      });
      await harness.removeFlow('default');
      await harness.config.put(harness.workspace, 'processor:agent-manager', 'default', agentFlowConfig(harness.workspace, 'default'));
      gateway = await startGatewayClient({ transport: harness.transport, workspace: harness.workspace });
    }, 15 * 60_000);

    afterAll(async () => {
      await gateway?.close();
      await harness?.stop();
      await compose(['-p', PROJECT, ...FILES, 'down', '-v', '--remove-orphans'], 3 * 60_000).catch((error: unknown) => console.warn(String(error)));
    }, 4 * 60_000);

    it("the agent answers a request through the stack's broker", async () => {
      // Ready once the configuration is loaded; the flow's subscriptions may still be opening then.
      const ready = await eventually(() => text('http://127.0.0.1:8000/readyz'), (body) => /^ready: .* 1 flow\(s\)/.test(body), 'the compose agent to serve the flow', 90_000);
      // The image's native binding loads, and the broker advertises the compose service name: the default
      // transport (auto) is the native one.
      expect(ready).toMatch(/^ready: config version \d+, 1 flow\(s\); transport native\n$/);
      const g = gateway as GatewayClient;
      const id = await g.send({ question: 'Is the stack up?' });
      await g.waitEnded([id], 30_000);
      expect(g.conversation(id).ends).toBe(1);
      expect(g.last(id)).toMatchObject({ message_type: 'answer', content: 'from the compose stack', error: null });
    }, 120_000);

    it('Prometheus scrapes the agent and the broker by their service names', async () => {
      const query = (expr: string) => text(`http://127.0.0.1:9090/api/v1/query?query=${encodeURIComponent(expr)}`);
      const sessions = await eventually(
        () => query('tg_agent_session_total{job="tg-agent",outcome="completed"}'),
        (body) => /"value":\[[\d.]+,"1"\]/.test(body),
        'a scrape that saw the completed session',
        60_000,
      );
      expect(JSON.parse(sessions)).toMatchObject({ status: 'success', data: { result: [{ metric: { instance: 'agent:8000' } }] } });
      // Each target is scraped at its own offset in the 15 s interval: the broker's first scrape may come later.
      type Up = { data: { result: { metric: { job: string }; value: [number, string] }[] } };
      const upByJob = (body: string) => Object.fromEntries((JSON.parse(body) as Up).data.result.map((r) => [r.metric.job, r.value[1]]));
      const up = await eventually(() => query('up'), (body) => body.startsWith('{') && Object.keys(upByJob(body)).length === 2, 'both targets scraped', 40_000);
      expect(upByJob(up)).toEqual({ 'tg-agent': '1', pulsar: '1' });
    }, 90_000);
  });
});
