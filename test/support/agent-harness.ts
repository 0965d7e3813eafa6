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
 * `ask` plays TrustGraph's gateway (docs/trustgraph-wire-notes.md §5.4–5.5): it subscribes (Exclusive, unique name) to the flow's
 * response topic, and with a second, observer subscription to the request topic (a non-persistent topic
 * delivers every message to every subscription, so the observer sees each `next` message the agent
 * publishes), then publishes the AgentRequest with a fresh uuid `id` property and collects the responses
 * carrying that id until one has `end_of_dialog: true`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { pino, type Logger } from 'pino';
import { queueToTopic } from '../../src/bus/topics.js';
import { MemoryTransport } from '../../src/bus/memory-transport.js';
import type { Consumer, IncomingMessage, Producer, Properties, Transport } from '../../src/bus/transport.js';
import type { NativeTransportOptions } from '../../src/bus/native-transport.js';
import type { WebSocketTransportOptions } from '../../src/bus/websocket-transport.js';
import { createAgentApp, type AgentApp } from '../../src/app.js';
import { AgentService, type ServiceHooks, type ServiceSettings } from '../../src/service.js';
import { SettingsSchema, type Settings } from '../../src/settings.js';
import {
  agentRequestCodec,
  agentResponseCodec,
  makeAgentRequest,
  triplesCodec,
  type AgentRequest,
  type AgentRequestInput,
  type AgentResponse,
  type Triples,
} from '../../src/wire/index.js';
import { startConfigService, TRUSTGRAPH_CONFIG_QUEUES, type ConfigEntry, type ConfigQueues, type ConfigServiceStandIn } from '../../dev/stand-ins/config-service.js';
import { startEmbeddings, type EmbeddingsStandIn } from '../../dev/stand-ins/embeddings.js';
import { startRowEmbeddings, type RowEmbeddingsStandIn } from '../../dev/stand-ins/row-embeddings.js';
import { startGraphRag, type GraphRagAnswer, type GraphRagStandIn } from '../../dev/stand-ins/graph-rag.js';
import { startLibrarian, type LibrarianAnswer, type LibrarianStandIn } from '../../dev/stand-ins/librarian.js';
import { startMcpTool, type McpHandler, type McpToolStandIn } from '../../dev/stand-ins/mcp-tool.js';
import { startPromptService, type PromptScript, type PromptServiceStandIn } from '../../dev/stand-ins/prompt-service.js';
import { startStructuredQuery, type StructuredQueryStandIn } from '../../dev/stand-ins/structured-query.js';
import { startToolService, type ToolServiceHandler, type ToolServiceStandIn } from '../../dev/stand-ins/tool-service.js';
import {
  agentFlowConfig,
  agentFlowTopics,
  flowRecordConfig,
  toolServiceDescriptor,
  toolServiceQueues,
  uniqueSuffix,
  uniqueWorkspace,
  type AgentFlowConfigOptions,
} from '../../dev/flow-config.js';
import { brokerUrls } from './transport-contract.js';
import { createTestTransport, type TransportKind } from './transports.js';
import { noTelemetry } from '../../src/observability/no-telemetry.js';

/** The default model: answers at once. */
export const FINAL_ANSWER_SCRIPT: PromptScript = () => 'Thought: I can answer directly\nFinal Answer: ok';

export interface ToolServiceSpec {
  /** Default: echoes `{arguments, config}` as JSON. */
  handler?: ToolServiceHandler;
  configParams?: (string | { name: string; required?: boolean })[];
  /** The entry's `group` (inherited by its tools that name none). */
  group?: string[];
  /** Topic under `non-persistent://tg/{request,response}/`. Default `<id>-<random>`. */
  topic?: string;
}

/** How the stand-ins of one flow behave. */
export interface FlowBehaviour {
  script?: PromptScript;
  /** Token usage the prompt stand-in reports on every reply. */
  promptUsage?: { in_token: number; out_token: number; model: string };
  templates?: Record<string, PromptScript>;
  graphRag?: GraphRagAnswer;
  mcpTools?: Record<string, McpHandler>;
  /**
   * Keep the librarian queues in the flow's `processor:agent-manager` entry and answer them with the workspace's
   * librarian stand-in (`true`: it stores every document; a function decides per request). Default: the queues
   * are left out, so the agent saves no documents (a flow whose blueprint has no librarian).
   */
  librarian?: boolean | LibrarianAnswer;
}

/**
 * Where the harness runs: on the real broker (`websocket`, `native`: test/support/transports.ts), or on one
 * in-process MemoryTransport shared by the agent, the stand-ins and the gateway (`memory`: no broker, for the
 * unit project).
 */
export type HarnessTransport = TransportKind | 'memory';

export interface AgentHarnessOptions extends FlowBehaviour {
  /** The broker's WebSocket URL; needed for the `websocket` transport only. */
  webSocketUrl?: string;
  /** The broker's binary protocol URL (native transport). Default: the test broker's (`brokerUrls()`). */
  serviceUrl?: string;
  /** The transport of the agent, the stand-ins and the gateway. Default websocket. */
  transport?: HarnessTransport;
  /** Default: a fresh `ws-<random>`. */
  workspace?: string;
  /** Default `default`. */
  flow?: string;
  /** `tool` config values by config key (objects are JSON-encoded, strings stored as-is). */
  tools?: Record<string, object | string>;
  /** Tool services to run (stand-in + `tool-service` config value), by descriptor id / config key. */
  toolServices?: Record<string, ToolServiceSpec>;
  /** Extra `tool-service` values stored without a stand-in (objects JSON-encoded). */
  toolServiceConfigs?: Record<string, object | string>;
  /** Overrides of the agent's settings (defaults: id agent-manager, request timeout 5 s and the same gap in streams, config timeout 2 s). */
  settings?: Partial<ServiceSettings>;
  hooks?: ServiceHooks;
  /**
   * Run the whole app (`src/app.ts`: metrics, audit, security gate, HTTP endpoints on an ephemeral port)
   * instead of the bare service, with these settings on top of the defaults and `settings`.
   */
  app?: Partial<Settings>;
  /** `isolated` (default): config queues of this harness only; `trustgraph`: request:tg:config etc. */
  configQueues?: 'isolated' | 'trustgraph';
  /** Start with the config stand-in not answering. Default true (available). */
  configAvailable?: boolean;
  /** Wait until `service.readiness().ready` before returning. Default true. */
  waitReady?: boolean;
  /** Timeout of that wait. Default 30 s. */
  readyTimeoutMs?: number;
  /** Options of the flow's `processor:agent-manager` entry. */
  flowConfig?: AgentFlowConfigOptions;
  logger?: Logger;
  /** Options of the stand-ins' and gateway's WebSocket transport (`harness.transport`), e.g. faster reconnects. */
  transportOptions?: Omit<WebSocketTransportOptions, 'url' | 'logger'>;
  /** Options of the agent's own WebSocket transport. */
  agentTransportOptions?: Omit<WebSocketTransportOptions, 'url' | 'logger'>;
  /**
   * Transports made by the caller (any kind), used instead of the two made from `transport` above; both may be
   * the same one. The harness closes them on `stop`.
   */
  transports?: { standIns: Transport; agent: Transport };
  /** Options of the stand-ins' and gateway's native transport. */
  nativeTransportOptions?: Omit<NativeTransportOptions, 'serviceUrl' | 'logger'>;
  /** Options of the agent's own native transport. */
  agentNativeTransportOptions?: Omit<NativeTransportOptions, 'serviceUrl' | 'logger'>;
  /** Hand the agent this instead of its transport, e.g. one that refuses what a broker with other limits would. */
  wrapAgentTransport?(transport: Transport): Transport;
}

export interface FlowStandIns {
  readonly workspace: string;
  readonly flow: string;
  /** Spec name → queue id. */
  readonly topics: Record<string, string>;
  readonly prompt: PromptServiceStandIn;
  readonly graphRag: GraphRagStandIn;
  readonly mcp: McpToolStandIn;
  readonly structuredQuery: StructuredQueryStandIn;
  readonly embeddings: EmbeddingsStandIn;
  readonly rowEmbeddings: RowEmbeddingsStandIn;
  /** Every Triples message the agent published on the flow's explainability topic. */
  readonly explainability: Triples[];
  stop(): Promise<void>;
}

export interface ObservedMessage<T> {
  /** Decoded with the project codec (defaults filled in). */
  readonly value: T;
  /** The payload as JSON, exactly as sent (to check that every field is present). */
  readonly raw: Record<string, unknown>;
  readonly properties: Properties;
  readonly payload: Buffer;
}

export interface AskResult {
  /** The `id` property the responses were collected under. */
  readonly id: string;
  readonly responses: AgentResponse[];
  readonly messages: ObservedMessage<AgentResponse>[];
  /** Payloads on the response topic with our id that did not decode as AgentResponse. */
  readonly undecodable: Buffer[];
  /** The `next` AgentRequests the agent published (our own request excluded). */
  readonly nextRequests: AgentRequest[];
  readonly nextMessages: ObservedMessage<AgentRequest>[];
  /** The end-of-dialog response. */
  readonly last: AgentResponse;
  /** Concatenated content of the `answer` messages. */
  readonly answer: string;
}

export interface AskOptions {
  /** Default: a fresh uuid. */
  id?: string;
  /** Properties to send instead of `{id}` (responses are then collected under `properties.id ?? "unknown"`). */
  properties?: Properties;
  /** Default: the harness's flow. */
  flow?: string;
  /** Wait for end_of_dialog. Default 20 s. */
  timeoutMs?: number;
  /**
   * After end_of_dialog, wait this long for late `next` messages on the observer. Default 200 ms on a broker,
   * 10 ms in memory (delivery there is a few event-loop turns).
   */
  settleMs?: number;
  /**
   * Publish the request this way instead of through the harness's transport, e.g. through the broker's REST
   * producer for a request larger than a WebSocket frame (TrustGraph's gateway publishes over the binary protocol).
   */
  publish?(topic: string, payload: Buffer, properties: Properties): Promise<void>;
  /**
   * Watch the request topic for the agent's `next` messages. Default true. Turn it off for very large requests:
   * the broker's WebSocket service reaches the broker over one connection for all its sessions, and a
   * non-persistent topic drops a message for a subscription whose connection is still busy with a large one, so
   * a second subscription taking the same large request can make the agent's copy be dropped.
   */
  observeNext?: boolean;
}

/** No end_of_dialog response in time; carries what did arrive. */
export class AskTimeoutError extends Error {
  override readonly name = 'AskTimeoutError';
  constructor(
    message: string,
    readonly responses: AgentResponse[],
    readonly nextRequests: AgentRequest[],
  ) {
    super(message);
  }
}

/** The default flow's stand-ins are the harness's own (the same as `flows[flow]`), and `stop` stops everything. */
export interface AgentHarness extends Omit<FlowStandIns, 'topics'> {
  readonly settings: ServiceSettings;
  /** The stand-ins' and gateway's transport (the agent has its own). */
  readonly transport: Transport;
  readonly service: AgentService;
  /** Only with the `app` option. */
  readonly app: AgentApp | undefined;
  /** `http://127.0.0.1:<port>` of the app's endpoints (only with the `app` option, once started). */
  httpUrl(): string;
  readonly config: ConfigServiceStandIn;
  /** The workspace's librarian stand-in, once a flow asked for one (the `librarian` option). */
  readonly librarian: LibrarianStandIn | undefined;
  readonly flows: Record<string, FlowStandIns>;
  readonly toolServices: Record<string, ToolServiceStandIn>;
  /** The config type of the agent's flows: `processor:<id>`. */
  readonly flowConfigType: string;
  /** Resolves when `service.start()` has (the configuration is loaded). */
  readonly started: Promise<void>;
  ask(request: AgentRequestInput, options?: AskOptions): Promise<AskResult>;
  /** Publish any payload on the request topic and collect the responses like `ask`. */
  askRaw(payload: Buffer | string, options?: AskOptions): Promise<AskResult>;
  /** Publish any payload on the request topic (fire and forget). */
  sendRaw(payload: Buffer | string, properties?: Properties, options?: { flow?: string }): Promise<void>;
  /** Start stand-ins for another flow of this workspace and write its `processor:agent-manager` entry. */
  addFlow(flow: string, behaviour?: FlowBehaviour, options?: AgentFlowConfigOptions): Promise<FlowStandIns>;
  /** Delete a flow's `processor:agent-manager` entry (its stand-ins keep running until `stop`). */
  removeFlow(flow: string): Promise<void>;
  putTool(key: string, tool: object | string): Promise<void>;
  deleteTool(key: string): Promise<void>;
  putToolService(key: string, descriptor: object | string): Promise<void>;
  /**
   * Resolves once the agent has applied the config stand-in's current version (times out while the stand-in
   * is unavailable: a "down" config service publishes no pushes).
   */
  configApplied(timeoutMs?: number): Promise<void>;
  waitReady(timeoutMs?: number): Promise<void>;
  waitFor(predicate: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function parseRaw(payload: Buffer): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(payload.toString('utf8')) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function describe(response: AgentResponse): string {
  const flags = [response.end_of_message ? 'eom' : '', response.end_of_dialog ? 'eod' : '', response.error ? 'error' : '']
    .filter(Boolean)
    .join(',');
  return `${response.message_type || '(empty)'}${flags ? `(${flags})` : ''}`;
}

export async function waitUntil(predicate: () => boolean, what: string, timeoutMs = 10_000, intervalMs = 25): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

async function startFlowStandIns(
  transport: Transport,
  workspace: string,
  flow: string,
  behaviour: FlowBehaviour,
): Promise<FlowStandIns> {
  const topics = agentFlowTopics(workspace, flow);
  const queues = (service: string): { requestQueue: string; responseQueue: string } => ({
    requestQueue: topics[`${service}-request`] ?? '',
    responseQueue: topics[`${service}-response`] ?? '',
  });
  const stoppers: (() => Promise<void>)[] = [];
  const track = <T extends { stop(): Promise<void> }>(standIn: T): T => {
    stoppers.push(() => standIn.stop());
    return standIn;
  };
  const stopAll = async (): Promise<void> => {
    await Promise.allSettled(stoppers.splice(0).map((stop) => stop()));
  };
  try {
    const prompt = track(
      await startPromptService({
        transport,
        ...queues('prompt'),
        script: behaviour.script ?? FINAL_ANSWER_SCRIPT,
        ...(behaviour.templates ? { templates: behaviour.templates } : {}),
        ...(behaviour.promptUsage ? { usage: behaviour.promptUsage } : {}),
      }),
    );
    const graphRag = track(
      await startGraphRag({ transport, ...queues('graph-rag'), ...(behaviour.graphRag ? { answer: behaviour.graphRag } : {}) }),
    );
    const mcp = track(await startMcpTool({ transport, ...queues('mcp-tool'), tools: behaviour.mcpTools ?? {}, workspace }));
    const structuredQuery = track(await startStructuredQuery({ transport, ...queues('structured-query') }));
    const embeddings = track(await startEmbeddings({ transport, ...queues('embeddings') }));
    const rowEmbeddings = track(await startRowEmbeddings({ transport, ...queues('row-embeddings-query') }));
    const explainability: Triples[] = [];
    const explainTopic = topics.explainability;
    if (explainTopic) {
      const consumer = await transport.subscribe({
        topic: queueToTopic(explainTopic),
        subscription: `explain-observer-${uniqueSuffix(6)}`,
        subscriptionType: 'Exclusive',
        handler: async (message) => {
          await message.ack();
          try {
            explainability.push(triplesCodec.decode(message.payload));
          } catch {
            // Not ours to judge here; tests look at the decoded ones.
          }
        },
      });
      stoppers.push(() => consumer.close({ unsubscribe: true }));
    }
    return {
      workspace,
      flow,
      topics,
      prompt,
      graphRag,
      mcp,
      structuredQuery,
      embeddings,
      rowEmbeddings,
      explainability,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** The flow's `processor:agent-manager` options: without the librarian queues unless the flow has a librarian. */
function flowConfigOptions(behaviour: FlowBehaviour, options: AgentFlowConfigOptions = {}): AgentFlowConfigOptions {
  if (behaviour.librarian) return options;
  return { ...options, topics: { 'librarian-request': undefined, 'librarian-response': undefined, ...options.topics } };
}

/** The stand-ins' and the agent's transports of a `kind`; in memory both are one bus. */
function harnessTransports(kind: HarnessTransport, options: AgentHarnessOptions, logger: Logger): { standIns: Transport; agent: Transport } {
  if (kind === 'memory') {
    const bus = new MemoryTransport({ logger: logger.child({ side: 'memory-bus' }) });
    return { standIns: bus, agent: bus };
  }
  if (kind === 'websocket' && !options.webSocketUrl) throw new Error('the websocket harness needs webSocketUrl');
  const webSocketUrl = options.webSocketUrl ?? '';
  const serviceUrl = options.serviceUrl ?? (kind === 'native' ? brokerUrls().serviceUrl : '');
  const make = (side: string, webSocket: AgentHarnessOptions['transportOptions'], native: AgentHarnessOptions['nativeTransportOptions']) =>
    createTestTransport(kind, {
      webSocketUrl,
      serviceUrl,
      logger: logger.child({ side }),
      ...(webSocket ? { webSocket } : {}),
      ...(native ? { native } : {}),
    });
  return {
    standIns: make('stand-ins', options.transportOptions, options.nativeTransportOptions),
    agent: make('agent', options.agentTransportOptions, options.agentNativeTransportOptions),
  };
}

export async function startAgentHarness(options: AgentHarnessOptions): Promise<AgentHarness> {
  const logger = options.logger ?? pino({ level: process.env.LOG_LEVEL ?? 'silent' });
  const workspace = options.workspace ?? uniqueWorkspace();
  const defaultFlow = options.flow ?? 'default';
  const suffix = uniqueSuffix(6);
  const configQueues: ConfigQueues =
    options.configQueues === 'trustgraph'
      ? { ...TRUSTGRAPH_CONFIG_QUEUES }
      : { request: `request:tg:config-${suffix}`, response: `response:tg:config-${suffix}`, push: `notify:tg:config-${suffix}` };
  const settings: ServiceSettings = {
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
    ...options.settings,
  };
  const flowConfigType = `processor:${settings.id}`;

  const kind = options.transport ?? 'websocket';
  const { standIns: transport, agent: agentTransport } = options.transports ?? harnessTransports(kind, options, logger);
  const defaultSettleMs = kind === 'memory' ? 10 : 200;
  const cleanups: (() => Promise<unknown>)[] = [];
  const producers = new Map<string, Promise<Producer>>();
  let service: AgentService | undefined;
  let app: AgentApp | undefined;
  let httpPort = 0;

  const stop = async (): Promise<void> => {
    if (app) await app.stop().catch(() => undefined);
    else if (service) await service.stop(2_000).catch(() => undefined);
    await Promise.allSettled(cleanups.splice(0).reverse().map((cleanup) => cleanup()));
    await Promise.allSettled([...producers.values()].map(async (p) => (await p).close()));
    producers.clear();
    await Promise.allSettled([agentTransport.close(), transport.close()]);
  };

  try {
    const config = await startConfigService({
      transport,
      queues: {
        request: settings.configRequestQueue,
        response: settings.configResponseQueue,
        push: settings.configPushQueue,
      },
    });
    cleanups.push(() => config.stop());

    const flows: Record<string, FlowStandIns> = {};
    const behaviour: FlowBehaviour = {
      ...(options.script ? { script: options.script } : {}),
      ...(options.templates ? { templates: options.templates } : {}),
      ...(options.graphRag ? { graphRag: options.graphRag } : {}),
      ...(options.mcpTools ? { mcpTools: options.mcpTools } : {}),
      ...(options.promptUsage ? { promptUsage: options.promptUsage } : {}),
      ...(options.librarian ? { librarian: options.librarian } : {}),
    };
    const main = await startFlowStandIns(transport, workspace, defaultFlow, behaviour);
    cleanups.push(() => main.stop());
    flows[defaultFlow] = main;

    // One librarian per workspace: its queues are `request:tg:librarian:<workspace>` for every flow.
    let librarian: LibrarianStandIn | undefined;
    const useLibrarian = async (setting: FlowBehaviour['librarian']): Promise<void> => {
      if (!setting) return;
      if (!librarian) {
        const topics = agentFlowTopics(workspace, defaultFlow);
        const standIn = await startLibrarian({
          transport,
          requestQueue: topics['librarian-request'] ?? '',
          responseQueue: topics['librarian-response'] ?? '',
        });
        cleanups.push(() => standIn.stop());
        librarian = standIn;
      }
      if (typeof setting === 'function') librarian.answer = setting;
    };
    await useLibrarian(behaviour.librarian);

    const toolServices: Record<string, ToolServiceStandIn> = {};
    const entries: ConfigEntry[] = [
      { type: flowConfigType, key: defaultFlow, value: agentFlowConfig(workspace, defaultFlow, flowConfigOptions(behaviour, options.flowConfig)) },
      { type: 'flow', key: defaultFlow, value: flowRecordConfig(workspace, defaultFlow) },
    ];
    for (const [id, spec] of Object.entries(options.toolServices ?? {})) {
      const queues = toolServiceQueues(spec.topic ?? `${id}-${uniqueSuffix()}`);
      const standIn = await startToolService({
        transport,
        id,
        ...queues,
        handler: spec.handler ?? ((args, cfg) => ({ arguments: args, config: cfg })),
      });
      cleanups.push(() => standIn.stop());
      toolServices[id] = standIn;
      entries.push({
        type: 'tool-service',
        key: id,
        value: {
          ...toolServiceDescriptor({ id, ...queues, ...(spec.configParams ? { configParams: spec.configParams } : {}) }),
          ...(spec.group ? { group: spec.group } : {}),
        },
      });
    }
    for (const [key, value] of Object.entries(options.toolServiceConfigs ?? {})) {
      entries.push({ type: 'tool-service', key, value: value });
    }
    for (const [key, value] of Object.entries(options.tools ?? {})) {
      entries.push({ type: 'tool', key, value: value });
    }
    await config.putMany(workspace, entries);
    config.available = options.configAvailable ?? true;

    let agent: AgentService;
    let started: Promise<void>;
    if (options.app) {
      const full: Settings = Object.freeze({
        ...SettingsSchema.parse({}),
        ...settings,
        metricsPort: 0,
        shutdownGraceSeconds: 2,
        ...options.app,
      });
      app = await createAgentApp(full, options.wrapAgentTransport?.(agentTransport) ?? agentTransport, logger.child({ side: 'agent' }));
      agent = app.service;
      const running = app;
      started = running.start().then((port) => {
        httpPort = port;
      });
    } else {
      const serviceTransport = options.wrapAgentTransport?.(agentTransport) ?? agentTransport;
      agent = new AgentService(settings, serviceTransport, logger.child({ side: 'agent' }), options.hooks ?? { telemetry: noTelemetry });
      started = agent.start();
    }
    service = agent;
    started.catch(() => undefined);

    const producerFor = (topic: string): Promise<Producer> => {
      let producer = producers.get(topic);
      if (!producer) {
        producer = transport.createProducer(topic);
        producers.set(topic, producer);
        producer.catch(() => producers.delete(topic));
      }
      return producer;
    };

    const waitReady = async (timeoutMs = options.readyTimeoutMs ?? 30_000): Promise<void> => {
      await waitUntil(() => agent.readiness().ready, `the agent to be ready (${agent.readiness().detail})`, timeoutMs);
    };

    const askRaw = async (payload: Buffer | string, askOptions: AskOptions = {}): Promise<AskResult> => {
      const flow = askOptions.flow ?? defaultFlow;
      const topics = agentFlowTopics(workspace, flow);
      const requestTopic = queueToTopic(topics.request ?? '');
      const responseTopic = queueToTopic(topics.response ?? '');
      const properties = askOptions.properties ?? { id: askOptions.id ?? randomUUID() };
      const id = properties.id ?? 'unknown';
      const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
      const timeoutMs = askOptions.timeoutMs ?? 20_000;

      const messages: ObservedMessage<AgentResponse>[] = [];
      const undecodable: Buffer[] = [];
      const nextMessages: ObservedMessage<AgentRequest>[] = [];
      let ownRequestSeen = false;
      let finished: (() => void) | undefined;
      const done = new Promise<void>((resolve) => (finished = resolve));

      const onResponse = async (message: IncomingMessage): Promise<void> => {
        await message.ack();
        if ((message.properties.id ?? 'unknown') !== id) return;
        const raw = parseRaw(message.payload);
        let value: AgentResponse;
        try {
          value = agentResponseCodec.decode(message.payload);
        } catch {
          undecodable.push(message.payload);
          return;
        }
        messages.push({ value, raw: raw ?? {}, properties: message.properties, payload: message.payload });
        if (value.end_of_dialog) finished?.();
      };
      const onRequest = async (message: IncomingMessage): Promise<void> => {
        await message.ack();
        if ((message.properties.id ?? 'unknown') !== id) return;
        if (!ownRequestSeen && message.payload.equals(body)) {
          ownRequestSeen = true;
          return;
        }
        try {
          const value = agentRequestCodec.decode(message.payload);
          nextMessages.push({ value, raw: parseRaw(message.payload) ?? {}, properties: message.properties, payload: message.payload });
        } catch {
          // Not a next message of the agent's (e.g. a second raw request with the same id).
        }
      };

      const consumers: Consumer[] = [];
      const closeConsumers = async (): Promise<void> => {
        await Promise.allSettled(consumers.map((c) => c.close({ unsubscribe: true })));
      };
      try {
        consumers.push(
          await transport.subscribe({
            topic: responseTopic,
            subscription: `rr-${randomBytes(6).toString('hex')}`,
            subscriptionType: 'Exclusive',
            handler: onResponse,
          }),
        );
        if (askOptions.observeNext ?? true) {
          consumers.push(
            await transport.subscribe({
              topic: requestTopic,
              subscription: `observer-${randomBytes(6).toString('hex')}`,
              subscriptionType: 'Exclusive',
              handler: onRequest,
            }),
          );
        }
        if (askOptions.publish) await askOptions.publish(requestTopic, body, properties);
        else await (await producerFor(requestTopic)).send({ payload: body, properties });

        let timer: NodeJS.Timeout | undefined;
        const timedOut = await Promise.race([
          done.then(() => false),
          new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs))),
        ]);
        clearTimeout(timer);
        const responses = messages.map((m) => m.value);
        if (timedOut) {
          throw new AskTimeoutError(
            `no end_of_dialog response for id ${id} on ${responseTopic} within ${timeoutMs} ms; ` +
              `received ${responses.length}: [${responses.map(describe).join(', ')}]` +
              (undecodable.length ? `, ${undecodable.length} undecodable` : '') +
              `; next messages: ${nextMessages.length}`,
            responses,
            nextMessages.map((m) => m.value),
          );
        }
        await new Promise((resolve) => setTimeout(resolve, askOptions.settleMs ?? defaultSettleMs));
        const last = responses.find((r) => r.end_of_dialog) as AgentResponse;
        return {
          id,
          responses,
          messages,
          undecodable,
          nextRequests: nextMessages.map((m) => m.value),
          nextMessages,
          last,
          answer: responses
            .filter((r) => r.message_type === 'answer')
            .map((r) => r.content)
            .join(''),
        };
      } finally {
        await closeConsumers();
      }
    };

    const harness: AgentHarness = {
      workspace,
      flow: defaultFlow,
      settings,
      transport,
      service: agent,
      app,
      httpUrl: () => {
        if (!app || httpPort === 0) throw new Error('httpUrl() needs the `app` option and a started app');
        return `http://127.0.0.1:${httpPort}`;
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
        return librarian;
      },
      flows,
      toolServices,
      flowConfigType,
      started,
      ask: (request, askOptions) => askRaw(agentRequestCodec.encode(makeAgentRequest(request)), askOptions),
      askRaw,
      async sendRaw(payload, properties = { id: randomUUID() }, sendOptions = {}) {
        const topics = agentFlowTopics(workspace, sendOptions.flow ?? defaultFlow);
        const producer = await producerFor(queueToTopic(topics.request ?? ''));
        await producer.send({ payload: typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload, properties });
      },
      async addFlow(flow, flowBehaviour, flowOptions) {
        const standIns =
          flows[flow] ??
          (await startFlowStandIns(transport, workspace, flow, {
            script: flowBehaviour?.script ?? main.prompt.script,
            templates: flowBehaviour?.templates ?? main.prompt.templates,
            graphRag: flowBehaviour?.graphRag ?? main.graphRag.answer,
            mcpTools: flowBehaviour?.mcpTools ?? main.mcp.tools,
          }));
        if (!flows[flow]) {
          flows[flow] = standIns;
          cleanups.push(() => standIns.stop());
        }
        await useLibrarian(flowBehaviour?.librarian);
        await config.putMany(workspace, [
          { type: flowConfigType, key: flow, value: agentFlowConfig(workspace, flow, flowConfigOptions(flowBehaviour ?? {}, flowOptions)) },
          { type: 'flow', key: flow, value: flowRecordConfig(workspace, flow) },
        ]);
        return standIns;
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
        waitUntil(
          () => agent.configVersion >= config.version,
          `the agent to apply config version ${config.version} (it is at ${agent.configVersion})`,
          timeoutMs,
        ),
      waitReady,
      waitFor: (predicate, what, timeoutMs) => waitUntil(predicate, what, timeoutMs),
      stop,
    };

    if (options.waitReady ?? true) {
      await Promise.race([
        started,
        new Promise((_, reject) =>
          setTimeout(() => reject(new Error('the agent did not load its configuration in time')), options.readyTimeoutMs ?? 30_000).unref(),
        ),
      ]);
      await waitReady();
    }
    return harness;
  } catch (error) {
    await stop();
    throw new Error(`could not start the agent harness: ${messageOf(error)}`, { cause: error });
  }
}
