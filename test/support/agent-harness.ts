/**
 * The real agent (src/service.ts, in-process) on the real broker — or, with `transport: 'memory'`, on one
 * in-process MemoryTransport (the unit project's behaviour suites, test/behaviour/) — surrounded by stand-ins for
 * the TrustGraph services it talks to, all speaking TrustGraph's wire format:
 *
 *   config stand-in ── processor:agent-manager / tool / tool-service ──▶ AgentService ◀── ask() (the "gateway")
 *   prompt, graph-rag, mcp-tool, structured-query, embeddings, row-embeddings stand-ins per flow,
 *   tool-service stand-ins on their own queues, an observer of the flow's explainability topic, and
 *   (per flow, with the `librarian` option) a librarian stand-in shared by the workspace's flows.
 *
 * Isolation: each harness uses its own workspace (`ws-<random>`; every flow topic carries it) and, unless
 * `configQueues: 'trustgraph'`, its own config queues (`request:tg:config-<random>`, ...), so harnesses never
 * see each other's configuration even on a shared broker.
 *
 * The parts: harness/harness-types.ts (the options and the harness's interface), harness/harness-transports.ts,
 * harness/workspace-stand-ins.ts and harness/flow-stand-ins.ts (the stand-ins), harness/gateway-ask.ts (`ask`).
 */
import { randomUUID } from 'node:crypto';
import { pino, type Logger } from 'pino';
import { flowSubscriptionName, queueToTopic } from '../../src/bus/topics.js';
import type { Producer, Transport } from '../../src/bus/transport.js';
import { createAgentApp, type AgentApp } from '../../src/app.js';
import { noTelemetry } from '../../src/observability/no-telemetry.js';
import { AgentService, type ServiceSettings } from '../../src/service.js';
import { SettingsSchema, type Settings } from '../../src/settings.js';
import { agentRequestCodec, makeAgentRequest } from '../../src/wire/index.js';
import { startConfigService, TRUSTGRAPH_CONFIG_QUEUES, type ConfigEntry, type ConfigQueues, type ConfigServiceStandIn } from '../../dev/stand-ins/config-service.js';
import { agentFlowConfig, agentFlowTopics, flowRecordConfig, uniqueSuffix, uniqueWorkspace } from '../../dev/flow-config.js';
import { flowConfigOptions } from './harness/flow-stand-ins.js';
import { askAgent, type Gateway } from './harness/gateway-ask.js';
import { harnessTransports } from './harness/harness-transports.js';
import type { AgentHarness, AgentHarnessOptions, FlowBehaviour } from './harness/harness-types.js';
import { waitUntil } from './harness/wait-until.js';
import { logLines, subscriptionStats, type Report } from './failure-report.js';
import { recentLines, type LogCapture } from './log-capture.js';
import { droppedFor } from './broker-drops.js';
import { brokerUrls } from './transport-contract.js';
import { WorkspaceStandIns } from './harness/workspace-stand-ins.js';

export * from './harness/harness-types.js';
export { waitUntil } from './harness/wait-until.js';

/** The agent's settings for a harness: small timeouts, its own config queues unless TrustGraph's are asked for. */
function harnessSettings(options: AgentHarnessOptions): ServiceSettings {
  const suffix = uniqueSuffix(6);
  const configQueues: ConfigQueues =
    options.configQueues === 'trustgraph'
      ? { ...TRUSTGRAPH_CONFIG_QUEUES }
      : { request: `request:tg:config-${suffix}`, response: `response:tg:config-${suffix}`, push: `notify:tg:config-${suffix}` };
  return {
    id: 'agent-manager',
    concurrency: 2,
    maxIterations: 10,
    strictTools: false,
    requestTimeoutSeconds: 5,
    configRequestQueue: configQueues.request,
    configResponseQueue: configQueues.response,
    configPushQueue: configQueues.push,
    configTimeoutSeconds: 2,
    // A stream's gap wait as long as its first-reply wait, unless a test sets it.
    streamGapTimeoutSeconds: options.settings?.requestTimeoutSeconds ?? 5,
    // Each iteration's `next` request on the bus, where a test can read it; the default (kept on the replica)
    // is covered by test/behaviour/kept-next.ts and by every test of the agent as a process.
    nextOnBus: true,
    ...options.settings,
  };
}

/** The default flow's behaviour: the options' stand-in settings. */
function defaultBehaviour(options: AgentHarnessOptions): FlowBehaviour {
  return {
    ...(options.script ? { script: options.script } : {}),
    ...(options.templates ? { templates: options.templates } : {}),
    ...(options.graphRag ? { graphRag: options.graphRag } : {}),
    ...(options.mcpTools ? { mcpTools: options.mcpTools } : {}),
    ...(options.promptUsage ? { promptUsage: options.promptUsage } : {}),
    ...(options.librarian ? { librarian: options.librarian } : {}),
  };
}

/** The flow's `processor:<id>` entry and its `flow` record. */
function flowEntries(flowConfigType: string, workspace: string, flow: string, behaviour: FlowBehaviour, options?: AgentHarnessOptions['flowConfig']): ConfigEntry[] {
  return [
    { type: flowConfigType, key: flow, value: agentFlowConfig(workspace, flow, flowConfigOptions(behaviour, options)) },
    { type: 'flow', key: flow, value: flowRecordConfig(workspace, flow) },
  ];
}

/** The running agent: the whole app (HTTP endpoints on an ephemeral port) or the bare service. */
interface RunningAgent {
  readonly service: AgentService;
  readonly app: AgentApp | undefined;
  /** Resolves when `service.start()` has (the configuration is loaded). */
  readonly started: Promise<void>;
  /** The app's HTTP port once started; 0 before, and without the app. */
  httpPort(): number;
}

async function startAgent(options: AgentHarnessOptions, settings: ServiceSettings, transport: Transport, logger: Logger): Promise<RunningAgent> {
  const agentTransport = options.wrapAgentTransport?.(transport) ?? transport;
  if (!options.app) {
    const service = new AgentService(settings, agentTransport, logger, options.hooks ?? { telemetry: noTelemetry });
    const started = service.start();
    started.catch(() => undefined);
    return { service, app: undefined, started, httpPort: () => 0 };
  }
  const full: Settings = Object.freeze({ ...SettingsSchema.parse({}), ...settings, metricsPort: 0, shutdownGraceSeconds: 2, ...options.app });
  const app = await createAgentApp(full, agentTransport, logger);
  let port = 0;
  const started = app.start().then((listening) => {
    port = listening;
  });
  started.catch(() => undefined);
  return { service: app.service, app, started, httpPort: () => port };
}

/** A gateway's producers, one per topic, made on first use. */
function producerCache(transport: Transport): { producerFor(topic: string): Promise<Producer>; close(): Promise<void> } {
  const producers = new Map<string, Promise<Producer>>();
  return {
    producerFor(topic) {
      let producer = producers.get(topic);
      if (!producer) {
        producer = transport.createProducer(topic);
        producers.set(topic, producer);
        producer.catch(() => producers.delete(topic));
      }
      return producer;
    },
    async close() {
      await Promise.allSettled([...producers.values()].map(async (p) => (await p).close()));
      producers.clear();
    },
  };
}

export async function startAgentHarness(options: AgentHarnessOptions): Promise<AgentHarness> {
  // Without a logger of the test's own, the last lines are kept to explain an ask that times out.
  const recent = options.logger || process.env.LOG_LEVEL ? undefined : recentLines('info');
  const logger = options.logger ?? recent?.logger ?? pino({ level: process.env.LOG_LEVEL ?? 'silent' });
  const workspace = options.workspace ?? uniqueWorkspace();
  const defaultFlow = options.flow ?? 'default';
  const settings = harnessSettings(options);
  const kind = options.transport ?? 'websocket';
  const { standIns: transport, agent: agentTransport } = options.transports ?? harnessTransports(kind, options, logger);
  const standIns = new WorkspaceStandIns(transport, workspace, defaultFlow);
  const producers = producerCache(transport);
  let agent: RunningAgent | undefined;
  let config: ConfigServiceStandIn | undefined;

  // The agent first; then the stand-ins, the config service and the gateway's producers, which are independent
  // of each other, at once (on Kafka each consumer's leave takes about half a second).
  const stop = async (): Promise<void> => {
    if (agent?.app) await agent.app.stop().catch(() => undefined);
    else await agent?.service.stop(2_000).catch(() => undefined);
    await Promise.allSettled([standIns.stop(), config?.stop(), producers.close()]);
    await Promise.allSettled([agentTransport.close(), transport.close()]);
  };

  try {
    // The config service and the flow's stand-ins do not wait for each other.
    const behaviour = defaultBehaviour(options);
    const [configStarted, flowStarted] = await Promise.allSettled([
      startConfigService({
        transport,
        queues: { request: settings.configRequestQueue, response: settings.configResponseQueue, push: settings.configPushQueue },
      }),
      standIns.flow(defaultFlow, behaviour),
    ]);
    if (configStarted.status === 'fulfilled') config = configStarted.value;
    else throw configStarted.reason;
    if (flowStarted.status === 'rejected') throw flowStarted.reason;
    const main = flowStarted.value;
    await standIns.useLibrarian(behaviour.librarian);
    const flowConfigType = `processor:${settings.id}`;
    await config.putMany(workspace, [
      ...flowEntries(flowConfigType, workspace, defaultFlow, behaviour, options.flowConfig),
      ...(await standIns.startToolServices(options.toolServices ?? {})),
      ...Object.entries(options.toolServiceConfigs ?? {}).map(([key, value]) => ({ type: 'tool-service', key, value })),
      ...Object.entries(options.tools ?? {}).map(([key, value]) => ({ type: 'tool', key, value })),
    ]);
    config.available = options.configAvailable ?? true;

    agent = await startAgent(options, settings, agentTransport, logger.child({ side: 'agent' }));
    const running = agent;
    // The broker's admin API, where the agent's broker is a Pulsar one (the WebSocket service's host and port).
    const adminUrl = (): string => (options.webSocketUrl ?? brokerUrls().webSocketUrl).replace(/^ws/, 'http');
    const gateway: Gateway = {
      transport,
      workspace,
      defaultFlow,
      defaultSettleMs: kind === 'memory' ? 10 : 200,
      producerFor: producers.producerFor,
      diagnose: (id, topics) => askDiagnosis({ id, topics, kind, adminUrl, service: running.service, main, recent, transports: { 'stand-ins': transport, agent: agentTransport } }),
      ...(kind === 'native' || kind === 'websocket'
        ? { droppedForAgent: (requestTopic: string, flow: string) => droppedFor(adminUrl(), requestTopic, flowSubscriptionName(settings.id, workspace, flow, 'request')) }
        : {}),
    };
    const harness = harnessApi({ options, settings, flowConfigType, gateway, standIns, config, agent, main, stop });
    if (options.waitReady ?? true) await untilStarted(agent, harness, options.readyTimeoutMs ?? 30_000);
    return harness;
  } catch (error) {
    await stop();
    throw new Error(`could not start the agent harness: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

interface AskDiagnosisParts {
  id: string;
  topics: { request: string; response: string };
  kind: string;
  adminUrl(): string;
  service: AgentService;
  main: AgentHarness['flows'][string];
  recent: Pick<LogCapture, 'lines'> | undefined;
  transports: Record<string, Transport>;
}

/**
 * Whether the agent took a request that got no final answer: its log and the model's calls; and, on Pulsar,
 * what the broker sent each subscription of the request, response and prompt topics (a message a
 * non-persistent topic dropped shows as taken in and not sent).
 */
async function askDiagnosis({ id, topics, kind, adminUrl, service, main, recent, transports }: AskDiagnosisParts): Promise<Report> {
  const report: Report = {
    agent: [
      `readiness: ${service.readiness().detail || 'ready'}`,
      `model calls: ${main.prompt.calls.length}`,
      ...Object.entries(transports).map(([name, t]) => `${name} transport: ${t.status().connected ? 'connected' : 'down'}, epoch ${t.status().epoch}`),
    ],
    ...(recent ? { 'agent log (warnings, errors and lines naming the id)': logLines(recent, [id], 60) } : {}),
  };
  if (kind !== 'native' && kind !== 'websocket') return report;
  const promptTopic = queueToTopic(main.topics['prompt-request'] ?? '');
  const stats = await Promise.all([topics.request, topics.response, promptTopic].map((topic) => subscriptionStats(adminUrl(), topic)));
  return { ...report, 'broker (request, response and prompt topics)': stats.flat() };
}

async function untilStarted(agent: RunningAgent, harness: AgentHarness, timeoutMs: number): Promise<void> {
  await Promise.race([
    agent.started,
    new Promise((_, reject) => setTimeout(() => reject(new Error('the agent did not load its configuration in time')), timeoutMs).unref()),
  ]);
  await harness.waitReady();
}

interface HarnessParts {
  options: AgentHarnessOptions;
  settings: ServiceSettings;
  flowConfigType: string;
  gateway: Gateway;
  standIns: WorkspaceStandIns;
  config: ConfigServiceStandIn;
  agent: RunningAgent;
  main: AgentHarness['flows'][string];
  stop(): Promise<void>;
}

/** What a test holds: the default flow's stand-ins, the gateway's `ask`, and the config stand-in's edits. */
function harnessApi({ options, settings, flowConfigType, gateway, standIns, config, agent, main, stop }: HarnessParts): AgentHarness {
  const { workspace, defaultFlow } = gateway;
  const service = agent.service;
  return {
    workspace,
    flow: defaultFlow,
    settings,
    transport: gateway.transport,
    service,
    app: agent.app,
    httpUrl: () => {
      if (!agent.app || agent.httpPort() === 0) throw new Error('httpUrl() needs the `app` option and a started app');
      return `http://127.0.0.1:${agent.httpPort()}`;
    },
    config,
    prompt: main.prompt,
    graphRag: main.graphRag,
    mcp: main.mcp,
    structuredQuery: main.structuredQuery,
    embeddings: main.embeddings,
    rowEmbeddings: main.rowEmbeddings,
    explainability: main.explainability,
    get librarian() {
      return standIns.librarian;
    },
    flows: standIns.flows,
    toolServices: standIns.toolServices,
    flowConfigType,
    started: agent.started,
    ask: (request, askOptions) => askAgent(gateway, agentRequestCodec.encode(makeAgentRequest(request)), askOptions),
    askRaw: (payload, askOptions) => askAgent(gateway, payload, askOptions),
    async sendRaw(payload, properties = { id: randomUUID() }, sendOptions = {}) {
      const topics = agentFlowTopics(workspace, sendOptions.flow ?? defaultFlow);
      const producer = await gateway.producerFor(queueToTopic(topics.request ?? ''));
      await producer.send({ payload: typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload, properties });
    },
    async addFlow(flow, flowBehaviour, flowOptions) {
      const added = await standIns.flow(flow, {
        script: flowBehaviour?.script ?? main.prompt.script,
        templates: flowBehaviour?.templates ?? main.prompt.templates,
        graphRag: flowBehaviour?.graphRag ?? main.graphRag.answer,
        mcpTools: flowBehaviour?.mcpTools ?? main.mcp.tools,
      });
      await standIns.useLibrarian(flowBehaviour?.librarian);
      await config.putMany(workspace, flowEntries(flowConfigType, workspace, flow, flowBehaviour ?? {}, flowOptions));
      return added;
    },
    async removeFlow(flow) {
      await config.deleteMany(workspace, [
        { type: flowConfigType, key: flow },
        { type: 'flow', key: flow },
      ]);
    },
    async putTool(key, tool) {
      await config.put(workspace, 'tool', key, tool);
    },
    async deleteTool(key) {
      await config.delete(workspace, 'tool', key);
    },
    async putToolService(key, descriptor) {
      await config.put(workspace, 'tool-service', key, descriptor);
    },
    configApplied: (timeoutMs = 10_000) =>
      waitUntil(() => service.configVersion >= config.version, `the agent to apply config version ${config.version} (it is at ${service.configVersion})`, timeoutMs),
    waitReady: (timeoutMs = options.readyTimeoutMs ?? 30_000) =>
      waitUntil(() => service.readiness().ready, `the agent to be ready (${service.readiness().detail})`, timeoutMs),
    waitFor: (predicate, what, timeoutMs) => waitUntil(predicate, what, timeoutMs),
    stop,
  };
}
