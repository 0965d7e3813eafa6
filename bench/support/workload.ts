/**
 * The benchmarks' side of the bus: TrustGraph's config service (the tests' stand-in), zero-latency prompt
 * and MCP tool stand-ins, the "gateway" that runs conversations, and the floor's request client.
 *
 * The hot-path stand-ins here are deliberately lean (JSON.parse of the request, a pre-encoded reply, no
 * recording), unlike dev/stand-ins which record every call: the load generator shares two cores with the
 * agent and the broker, and must neither leak over a 10-minute soak nor eat the agent's CPU.
 *
 * A conversation is two iterations: the model first calls the one MCP tool, then answers. A lean librarian
 * confirms the documents both agents save (TrustGraph's agent waits for each save, so without one it would
 * stall; tg-agent saves in the background).
 *
 * With `pythonBrokerUrl`, the prompt, MCP tool and librarian services are TrustGraph's own Python client instead
 * (dev/python-stand-ins.ts), one process per service: the same answers, through the code TrustGraph's services run.
 *
 *   client ─request─▶ agent ─prompt─▶ stand-in ─▶ agent ─mcp-tool─▶ stand-in ─▶ agent ─next─▶ agent
 *          ─prompt─▶ stand-in ─▶ agent ─answer (end_of_dialog)─▶ client
 *
 * That is 9 one-way broker hops on the critical path (4.5 round trips of the floor).
 */
import { randomUUID } from 'node:crypto';
import { RequestClient } from '../../src/bus/request-client.js';
import { queueToTopic } from '../../src/bus/topics.js';
import { TransportError } from '../../src/bus/errors.js';
import { exponentialBackoff, retry } from '../../src/retry/index.js';
import type { Consumer, IncomingMessage, OutgoingMessage, Producer, Transport } from '../../src/bus/transport.js';
import {
  agentRequestCodec,
  makeAgentRequest,
  makePromptResponse,
  makeToolResponse,
  promptResponseCodec,
  pythonJsonDumps,
  toolResponseCodec,
  type Codec,
} from '../../src/wire/index.js';
import { librarianResponse } from '../../dev/stand-ins/librarian.js';
import { startConfigService, type ConfigEntry, type ConfigQueues, type ConfigServiceStandIn } from '../../dev/stand-ins/config-service.js';
import { agentFlowConfig, agentFlowTopics, flowRecordConfig, uniqueSuffix, uniqueWorkspace } from '../../dev/flow-config.js';
import { startPythonStandIn, type PythonFault, type PythonStandIn } from '../../dev/python-stand-ins.js';

/** One-way broker hops on a conversation's critical path (see the diagram above). */
export const CRITICAL_PATH_HOPS = 9;
export const ITERATIONS_PER_CONVERSATION = 2;

export const ACTION_TEXT = 'Thought: I should look this up\nAction: lookup\nArgs: {"query": "benchmark"}';
export const FINAL_TEXT = 'Thought: I know the answer now\nFinal Answer: 42';
export const OBSERVATION_TEXT = 'The answer is 42';

/** The one tool the model uses: an MCP tool with one declared argument (so arguments are validated). */
export const LOOKUP_TOOL = {
  name: 'lookup',
  description: 'Look something up',
  type: 'mcp-tool',
  'mcp-tool': 'lookup-server',
  arguments: [{ name: 'query', type: 'string', description: 'What to look up' }],
};

/** The request every conversation sends (the `id` property differs). */
export const REQUEST_BODY = agentRequestCodec.encode(
  makeAgentRequest({ question: 'What is the answer to the benchmark question?', group: ['default'] }),
);

export interface Workload {
  readonly workspace: string;
  readonly flow: string;
  readonly configQueues: ConfigQueues;
  /** The tests' config stand-in, holding `entries` (undefined with `externalConfig`). */
  readonly config: ConfigServiceStandIn | undefined;
  /** The workspace's config values (flow definition, flow record, the lookup tool), values as JSON strings. */
  readonly entries: { type: string; key: string; value: string }[];
  readonly topics: Record<string, string>;
  /** Requests each service has received so far. */
  counts(): Promise<ServiceCounts>;
  /** The stand-ins' hops (bench:iteration --timeline; the JavaScript stand-ins only). */
  readonly hops: HopTap;
  /** How the MCP tool stand-in behaves now; a benchmark may change it at any time (bench:faults). */
  readonly faults: { tool: ToolFault };
  stop(): Promise<void>;
}

export interface ServiceCounts {
  prompt: number;
  tool: number;
  librarian: number;
}

/** The workload's prompt, MCP tool and librarian services, whichever client they run on. */
export interface WorkloadServices {
  counts(): Promise<ServiceCounts>;
  readonly faults: { tool: ToolFault };
  stop(): Promise<void>;
}

/** `answer` every call; `silent`: answer none; `dropEvery`: leave out every n-th reply. */
export type ToolFault = 'answer' | 'silent' | { readonly dropEvery: number };

interface LeanStandIn {
  count: number;
  stop(): Promise<void>;
}

/**
 * Told of each step of a conversation, by its `id`: the gateway's request and responses, each stand-in's
 * request received and reply sent (`bench:iteration --timeline`; everything in this process, one clock).
 */
export type HopListener = (id: string, event: string) => void;

/** Where the stand-ins and the gateway report their hops; `listener` is set only while a timeline is taken. */
export interface HopTap {
  listener?: HopListener | undefined;
}

/**
 * Send, and send again on a failure the transport calls retriable (a burst of thousands of messages that found no
 * room among the producer's sends in flight within the send timeout, a reconnect), as a real service's publish
 * retries, instead of losing it.
 */
function sendWhenRoom(producer: Producer, message: OutgoingMessage): Promise<void> {
  return retry(() => producer.send(message), {
    backoff: exponentialBackoff({ initialMs: 20, maxMs: 500 }),
    maxElapsedMs: 60_000,
    retryIf: (error) => error instanceof TransportError && error.retriable,
  });
}

/** Subscribe (Shared) to a request topic, answer each message with `reply(payload)` on the response topic. */
async function leanStandIn(
  transport: Transport,
  requestQueue: string,
  responseQueue: string,
  /** The reply to send; undefined sends none (a fault: bench:faults). */
  reply: (payload: Buffer) => Buffer | undefined,
  tap: { name: string; hops: HopTap },
): Promise<LeanStandIn> {
  const producer = await transport.createProducer(queueToTopic(responseQueue));
  const state: LeanStandIn = {
    count: 0,
    stop: async () => {
      await Promise.allSettled([consumer.close({ unsubscribe: true }), producer.close()]);
    },
  };
  const consumer = await transport.subscribe({
    topic: queueToTopic(requestQueue),
    subscription: `bench-stand-in-${uniqueSuffix(4)}`,
    subscriptionType: 'Shared',
    handler: async (message) => {
      const id = message.properties.id ?? '';
      tap.hops.listener?.(id, `${tap.name} request received`);
      await message.ack();
      state.count++;
      const payload = reply(message.payload);
      if (payload === undefined) return;
      tap.hops.listener?.(id, `${tap.name} reply sent`);
      await sendWhenRoom(producer, { payload, properties: { id } });
    },
  });
  return state;
}

export interface WorkloadOptions {
  transport: Transport;
  /** More `tool` values (config key → JSON string) besides the `lookup` tool. */
  tools?: Record<string, string>;
  /** Do not start the config stand-in: the caller serves `entries` itself (bench/support/config-process.ts). */
  externalConfig?: boolean;
  /**
   * Run the prompt, MCP tool and librarian services on TrustGraph's own Python client, connected to this broker
   * (`pulsar://…`, `kafka://…`, `amqp://…`), instead of the lean JavaScript stand-ins.
   */
  pythonBrokerUrl?: string;
}

/** Config stand-in with the flow and its tools, and the prompt and MCP tool stand-ins of the flow. */
export async function startWorkload(options: WorkloadOptions): Promise<Workload> {
  const { transport } = options;
  const workspace = uniqueWorkspace('bench');
  const flow = 'default';
  const suffix = uniqueSuffix(6);
  const configQueues: ConfigQueues = {
    request: `request:tg:config-bench-${suffix}`,
    response: `response:tg:config-bench-${suffix}`,
    push: `notify:tg:config-bench-${suffix}`,
  };
  const topics = agentFlowTopics(workspace, flow);
  const config = options.externalConfig ? undefined : await startConfigService({ transport, queues: configQueues });

  const hops: HopTap = {};
  const services = options.pythonBrokerUrl
    ? await startPythonServices(transport, topics, options.pythonBrokerUrl)
    : await startLeanServices(transport, topics, hops);

  const entries: (ConfigEntry & { value: string })[] = [
    { type: 'processor:agent-manager', key: flow, value: agentFlowConfig(workspace, flow) },
    { type: 'flow', key: flow, value: flowRecordConfig(workspace, flow) },
    { type: 'tool', key: 'lookup', value: pythonJsonDumps(LOOKUP_TOOL) },
    ...Object.entries(options.tools ?? {}).map(([key, value]) => ({ type: 'tool', key, value })),
  ];
  await config?.putMany(workspace, entries);

  return {
    workspace,
    flow,
    configQueues,
    config,
    entries,
    topics,
    hops,
    faults: services.faults,
    counts: () => services.counts(),
    async stop() {
      await Promise.allSettled([services.stop(), config?.stop()]);
    },
  };
}

/** The lean JavaScript prompt, MCP tool and librarian stand-ins (see the header). */
async function startLeanServices(transport: Transport, topics: Record<string, string>, hops: HopTap): Promise<WorkloadServices> {
  const actionReply = promptResponseCodec.encode(makePromptResponse({ text: ACTION_TEXT, end_of_stream: true }));
  const finalReply = promptResponseCodec.encode(makePromptResponse({ text: FINAL_TEXT, end_of_stream: true }));
  const toolReply = toolResponseCodec.encode(makeToolResponse({ text: OBSERVATION_TEXT }));
  const prompt = await leanStandIn(
    transport,
    topics['prompt-request']!,
    topics['prompt-response']!,
    (payload) => {
      const request = JSON.parse(payload.toString('utf8')) as { terms?: { history?: string } };
      return request.terms?.history === '[]' ? actionReply : finalReply;
    },
    { name: 'prompt', hops },
  );
  const faults: { tool: ToolFault } = { tool: 'answer' };
  let toolCalls = 0;
  const toolAnswer = (): Buffer | undefined => {
    toolCalls++;
    const fault = faults.tool;
    if (fault === 'silent' || (typeof fault === 'object' && toolCalls % fault.dropEvery === 0)) return undefined;
    return toolReply;
  };
  const tool = await leanStandIn(transport, topics['mcp-tool-request']!, topics['mcp-tool-response']!, toolAnswer, { name: 'tool', hops });
  const librarianReply = Buffer.from(librarianResponse(null), 'utf8');
  const librarian = await leanStandIn(transport, topics['librarian-request']!, topics['librarian-response']!, () => librarianReply, { name: 'librarian', hops });

  return {
    faults,
    counts: () => Promise.resolve({ prompt: prompt.count, tool: tool.count, librarian: librarian.count }),
    async stop() {
      await Promise.allSettled([prompt.stop(), tool.stop(), librarian.stop()]);
    },
  };
}

/** The prompt, MCP tool and librarian services on TrustGraph's own Python client, each answering once subscribed. */
async function startPythonServices(transport: Transport, topics: Record<string, string>, brokerUrl: string): Promise<WorkloadServices> {
  const texts = { action: ACTION_TEXT, final: FINAL_TEXT, observation: OBSERVATION_TEXT, 'graph-rag': OBSERVATION_TEXT };
  const queues = (name: string): { requestQueue: string; responseQueue: string } => ({ requestQueue: topics[`${name}-request`]!, responseQueue: topics[`${name}-response`]! });
  const started: PythonStandIn[] = [];
  const stop = async (): Promise<void> => void (await Promise.allSettled(started.map((s) => s.stop())));
  try {
    for (const service of ['prompt', 'mcp-tool', 'librarian'] as const) started.push(await startPythonStandIn({ service, ...queues(service) }, { brokerUrl, texts }));
    for (const standIn of started) await standIn.waitAnswering(transport);
  } catch (error) {
    await stop();
    throw error;
  }
  const [prompt, tool, librarian] = started as [PythonStandIn, PythonStandIn, PythonStandIn];
  let toolFault: ToolFault = 'answer';
  const asPython = (fault: ToolFault): PythonFault => (typeof fault === 'object' ? { 'drop-every': fault.dropEvery } : fault);
  return {
    faults: {
      get tool() {
        return toolFault;
      },
      set tool(fault: ToolFault) {
        toolFault = fault;
        tool.fault(asPython(fault)).catch((error: unknown) => console.error(`the Python MCP tool stand-in refused the fault: ${String(error)}`));
      },
    },
    counts: async () => ({ prompt: (await prompt.counts()).received, tool: (await tool.counts()).received, librarian: (await librarian.counts()).received }),
    stop,
  };
}

export interface ConversationRecord {
  /** performance.now() when the request was published. */
  start: number;
  /** performance.now() when the end_of_dialog response arrived. */
  end: number;
  /** Responses received for the conversation. */
  responses: number;
  /** The final answer was not the expected one, or an error response arrived. */
  failed: boolean;
  /** Why it failed: the error response's `type: message`, `timeout` or `wrong answer`. */
  error?: string;
}

interface Pending {
  start: number;
  responses: number;
  failed: boolean;
  error?: string;
  answer: string;
  resolve(record: ConversationRecord): void;
  timer: NodeJS.Timeout;
}

/**
 * TrustGraph's gateway, reduced to what a benchmark needs: publish an AgentRequest with a fresh `id`, gather
 * the responses carrying it until `end_of_dialog`. `run(c, ...)` keeps `c` conversations in flight.
 */
export class ConversationClient {
  private producer: Producer | undefined;
  private consumer: Consumer | undefined;
  private readonly pending = new Map<string, Pending>();
  /** Conversations started, and those that ended without a final message within the timeout (30 s). */
  started = 0;
  timeouts = 0;
  /** The ids of the first 100 conversations that ended without a final message, to look up in the agent's log. */
  readonly unanswered: string[] = [];
  /** Told of each request sent and each response received, while a timeline is taken. */
  hops: HopTap = {};

  constructor(
    private readonly transport: Transport,
    private readonly topics: Record<string, string>,
    private readonly timeoutMs = 30_000,
  ) {}

  async start(): Promise<void> {
    this.consumer = await this.transport.subscribe({
      topic: queueToTopic(this.topics.response!),
      subscription: `bench-gateway-${uniqueSuffix(6)}`,
      subscriptionType: 'Exclusive',
      handler: (message) => this.onResponse(message),
    });
    this.producer = await this.transport.createProducer(queueToTopic(this.topics.request!));
  }

  private async onResponse(message: IncomingMessage): Promise<void> {
    const pending = this.pending.get(message.properties.id ?? '');
    await message.ack();
    if (!pending) return;
    pending.responses++;
    const response = JSON.parse(message.payload.toString('utf8')) as {
      message_type?: string;
      content?: string;
      error?: unknown;
      end_of_dialog?: boolean;
    };
    this.hops.listener?.(message.properties.id ?? '', `gateway got ${response.message_type ?? 'a response'}${response.end_of_dialog ? ' (end of dialog)' : ''}`);
    if (response.error) {
      pending.failed = true;
      pending.error ??= errorText(response.error);
    }
    if (response.message_type === 'answer') pending.answer += response.content ?? '';
    if (response.end_of_dialog) {
      const id = message.properties.id ?? '';
      this.pending.delete(id);
      clearTimeout(pending.timer);
      const failed = pending.failed || pending.answer !== '42';
      pending.resolve({
        start: pending.start,
        end: performance.now(),
        responses: pending.responses,
        failed,
        ...(failed ? { error: pending.error ?? 'wrong answer' } : {}),
      });
    }
  }

  /** One conversation; resolves on end_of_dialog, or after the timeout with `failed: true`. */
  converse(): Promise<ConversationRecord> {
    const id = randomUUID();
    this.started++;
    const start = performance.now();
    return new Promise<ConversationRecord>((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        this.timeouts++;
        if (this.unanswered.length < 100) this.unanswered.push(id);
        resolve({ start, end: performance.now(), responses: -1, failed: true, error: 'timeout' });
      }, this.timeoutMs);
      this.pending.set(id, { start, responses: 0, failed: false, answer: '', resolve, timer });
      this.hops.listener?.(id, 'gateway request sent');
      // A send that still fails leaves the conversation to its timeout, counted as one.
      sendWhenRoom(this.producer!, { payload: REQUEST_BODY, properties: { id } }).catch(() => undefined);
    });
  }

  /**
   * Keeps `concurrency` conversations in flight until `until()` is true; each finished one goes to `record`.
   * Resolves when the last in-flight conversation has ended.
   */
  async run(concurrency: number, until: () => boolean, record: (r: ConversationRecord) => void): Promise<void> {
    const loop = async (): Promise<void> => {
      while (!until()) record(await this.converse());
    };
    await Promise.all(Array.from({ length: concurrency }, loop));
  }

  async stop(): Promise<void> {
    await Promise.allSettled([this.consumer?.close({ unsubscribe: true }), this.producer?.close()]);
  }
}

/** An error response's `error` (TrustGraph's `{ type, message }`) as one line. */
function errorText(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error);
  const { type, message } = error as { type?: unknown; message?: unknown };
  return `${String(type ?? 'error')}: ${String(message ?? '')}`;
}

const rawCodec: Codec<Buffer> = { name: 'raw', encode: (value) => value, decode: (payload) => Buffer.from(payload) };

/**
 * The floor: the agent's own RequestClient (the code its prompt and tool calls go through) against an echo
 * process on a request/response pair of non-persistent topics, with `concurrency` requests in flight.
 */
export class FloorClient {
  readonly requestTopic: string;
  readonly responseTopic: string;
  private readonly client: RequestClient<Buffer, Buffer>;

  constructor(transport: Transport, name: string) {
    this.requestTopic = `non-persistent://tg/request/bench-echo-${name}`;
    this.responseTopic = `non-persistent://tg/response/bench-echo-${name}`;
    this.client = new RequestClient({
      transport,
      requestTopic: this.requestTopic,
      responseTopic: this.responseTopic,
      requestCodec: rawCodec,
      responseCodec: rawCodec,
      timeoutMs: 30_000,
    });
  }

  start(): Promise<void> {
    return this.client.start();
  }

  /** Round trips (ms) with `concurrency` in flight, until `until()`. */
  async run(concurrency: number, until: () => boolean, record: (ms: number) => void): Promise<void> {
    const loop = async (): Promise<void> => {
      while (!until()) {
        const started = performance.now();
        await this.client.request(REQUEST_BODY);
        record(performance.now() - started);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, loop));
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

/** Publish→broker-ack latency (ms) of `count` sequential sends of `payload` to `topic`. */
export async function publishAckLatencies(transport: Transport, topic: string, payload: Buffer, count: number): Promise<number[]> {
  const producer = await transport.createProducer(topic);
  const out: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      await producer.send({ payload, properties: { id: String(i) } });
      out.push(performance.now() - started);
    }
  } finally {
    await producer.close();
  }
  return out;
}
