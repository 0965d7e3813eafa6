/**
 * The agent harness's vocabulary: how a test describes the flows and tools around the agent (options, flow
 * behaviour, tool services), what `ask` returns, and the harness itself (agent-harness.ts starts one).
 */
import type { Logger } from 'pino';
import type { Properties, Transport } from '../../../src/bus/transport.js';
import type { NativeTransportOptions } from '../../../src/bus/pulsar/native/native-transport.js';
import type { WebSocketTransportOptions } from '../../../src/bus/pulsar/websocket/websocket-transport.js';
import type { AgentApp } from '../../../src/app.js';
import type { AgentService, ServiceHooks, ServiceSettings } from '../../../src/service.js';
import type { Settings } from '../../../src/settings.js';
import type { AgentRequest, AgentRequestInput, AgentResponse, Triples } from '../../../src/wire/index.js';
import type { ConfigServiceStandIn } from '../../../dev/stand-ins/config-service.js';
import type { EmbeddingsStandIn } from '../../../dev/stand-ins/embeddings.js';
import type { RowEmbeddingsStandIn } from '../../../dev/stand-ins/row-embeddings.js';
import type { GraphRagAnswer, GraphRagStandIn } from '../../../dev/stand-ins/graph-rag.js';
import type { LibrarianAnswer, LibrarianStandIn } from '../../../dev/stand-ins/librarian.js';
import type { McpHandler, McpToolStandIn } from '../../../dev/stand-ins/mcp-tool.js';
import type { PromptScript, PromptServiceStandIn } from '../../../dev/stand-ins/prompt-service.js';
import type { StructuredQueryStandIn } from '../../../dev/stand-ins/structured-query.js';
import type { ToolServiceHandler, ToolServiceStandIn } from '../../../dev/stand-ins/tool-service.js';
import type { AgentFlowConfigOptions } from '../../../dev/flow-config.js';
import type { TransportKind } from '../transports.js';

/** The default model: answers at once. */
export const FINAL_ANSWER_SCRIPT: PromptScript = () => 'Thought: I can answer directly\nFinal Answer: ok';

export interface ToolServiceSpec {
  /** Default: echoes `{arguments, config}` as JSON. */
  handler?: ToolServiceHandler;
  configParams?: (string | { name: string; required?: boolean })[];
  /** The entry's `group` (inherited by its tools that name none). */
  group?: string[];
  /** The entry's `idempotent`: the agent may send it a request twice (hedged calls). */
  idempotent?: boolean;
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
export type HarnessTransport = TransportKind | 'memory' | 'rabbitmq' | 'kafka';

export interface AgentHarnessOptions extends FlowBehaviour {
  /** The broker's WebSocket URL; needed for the `websocket` transport only. */
  webSocketUrl?: string;
  /** The broker's binary protocol URL (native transport). Default: the test broker's (`brokerUrls()`). */
  serviceUrl?: string;
  /**
   * The brokers' admin API (one URL, or a comma-separated list on a cluster), as `--broker-admin-url`: the agent's
   * WebSocket transport reads its consumers and producers there (socket-heal.ts). Default: the WebSocket URL's host, as the app derives it.
   */
  brokerAdminUrl?: string;
  /** The RabbitMQ broker's AMQP URL; needed for the `rabbitmq` transport only. */
  rabbitmqUrl?: string;
  /** The Kafka broker's `host:port`; needed for the `kafka` transport only. */
  kafkaBootstrapServers?: string;
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
  /** Messages the broker never sent the agent's request subscription, when nothing at all came (else 0). */
  droppedForAgent = 0;
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
