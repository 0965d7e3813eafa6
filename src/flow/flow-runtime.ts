/**
 * One running flow of one workspace: the shared subscription on its request queue, its producers
 * (`next`, `response`, `explainability`) and its clients of TrustGraph services. Producers and clients
 * start first, the consumer last, so nothing is received before it can be answered.
 */
import type { Logger } from 'pino';
import { TransportError } from '../bus/errors.js';
import { RequestClient } from '../bus/request-client.js';
import { flowSubscriptionName, queueToTopic } from '../bus/topics.js';
import { whenConnected } from '../bus/when-connected.js';
import type { Consumer, OutgoingMessage, Producer, Properties, Transport } from '../bus/transport.js';
import type { FlowDefinition } from '../config/flows.js';
import type { IterationEvents, IterationResult, UndeclaredArguments } from '../agent/iteration.js';
import type { Failure } from '../agent/failure.js';
import type { ToolClients } from '../tools/run/tool-clients.js';
import type { ToolServiceClients } from './tool-service-clients.js';
import type { ToolRegistry } from '../tools/registry/registry.js';
import {
  embeddingsRequestCodec,
  embeddingsResponseCodec,
  graphRagQueryCodec,
  graphRagResponseCodec,
  librarianRequestCodec,
  librarianResponseCodec,
  promptRequestCodec,
  promptResponseCodec,
  rowEmbeddingsRequestCodec,
  rowEmbeddingsResponseCodec,
  structuredQueryRequestCodec,
  structuredQueryResponseCodec,
  toolRequestCodec,
  toolResponseCodec,
  type AgentRequest,
  type Codec,
} from '../wire/index.js';
import type { ConcurrencyLimit } from './concurrency-limit.js';
import { RequestHandler } from './request-handler.js';
import { DocumentSaver, type DocumentSaveOutcome } from './document-saver.js';

/** Why a request was refused before it ran. */
export interface Refusal {
  kind: 'group-policy' | 'initial-state' | 'signature' | 'invalid-state';
  /** The metric label and audit detail: e.g. `policy-group`, `initial-state`, `stale-signature`. */
  reason: string;
  message: string;
}

/** What a request must pass before it is run (group policy, iteration signature); see src/security. */
export interface RequestGate {
  /** A refusal ends the dialog with an error; undefined lets the request through. */
  check(flow: FlowDefinition, request: AgentRequest, properties: Properties, registry: ToolRegistry): Refusal | undefined;
  /** Extra properties for a `next` message (the iteration signature). */
  nextProperties(flow: FlowDefinition, request: AgentRequest, id: string): Properties;
}

/** Iteration events plus what happens around the iteration: a refusal, and the end of the message's handling. */
export type IterationHooks = IterationEvents & {
  refused?(refusal: Refusal): void;
  /** The iteration failed for a reason other than the dialog's own logic (too large, too deep, broker, ...). */
  failed?(failure: Failure): void;
  /** Once per consumed message, after its last message is with the broker (or could not be). */
  done?(result: IterationResult): void;
};

export interface FlowRuntimeDeps {
  transport: Transport;
  processorId: string;
  requestTimeoutMs: number;
  maxIterations: number;
  strictTools: boolean;
  /** What happens to arguments a tool does not declare (see `UndeclaredArguments`). Default `drop`. */
  undeclaredArguments?: UndeclaredArguments;
  logger: Logger;
  registryFor(workspace: string): ToolRegistry;
  limit: ConcurrencyLimit;
  toolServices: ToolServiceClients;
  /** Per-iteration hooks for metrics and the audit trail; `request` is undefined when it could not be decoded. */
  eventsFor(flow: FlowDefinition, request: AgentRequest | undefined, id: string): IterationHooks;
  /**
   * Requests whose payload is larger are refused with an error response. Default: three quarters of what the
   * transport can carry in one message, leaving room for what the conversation adds to its `next` request.
   */
  maxRequestBytes?: number;
  gate?: RequestGate;
  /**
   * How long a publish that failed because the broker was unreachable is retried, and how long a `next`
   * message waits for the broker connection to be whole again, before the iteration gives up.
   * Default 60000 ms.
   */
  publishRetryMs?: number;
  /**
   * Requests waiting for a concurrency slot (across flows) beyond which a new one is refused at once with an
   * error response. Default DEFAULT_MAX_QUEUED (request-handler.ts).
   */
  maxQueued?: number;
  /** Per-save timeout of librarian documents. Default 120000 ms (TrustGraph's `--librarian-timeout`). */
  librarianTimeoutMs?: number;
  /** Librarian saves waiting for an answer at most; more are skipped. Default 64. */
  librarianMaxInFlight?: number;
  /**
   * Consumers on the flow's Shared request subscription. Default: as many as the transport needs to give the
   * subscription a REQUEST_WINDOW-message window (one where a consumer's queue is not capped).
   */
  requestConsumers?: number;
  /** TrustGraph's generic consumer, producer and downstream-call metrics. */
  instrument?: {
    /** A `next` message was handed to the broker / one arrived (TrustGraph's agent counts neither). */
    next?(event: 'published' | 'received'): void;
    /** A request was refused because `maxQueued` requests were waiting. */
    overloaded?(): void;
    consumed(consumer: string, seconds: number, ok: boolean): void;
    /** The request consumer is subscribed (before its first message). */
    subscribing?(consumer: string): void;
    produced(producer: string): void;
    /** A call to a TrustGraph service ended; `targetService` is the request spec name, e.g. `prompt-request`. */
    downstream(targetService: string, outcome: { seconds: number; status: 'ok' | 'timeout' | 'error'; errorType?: string }): void;
    /** A librarian document save ended (or was skipped). */
    documentSaved?(outcome: DocumentSaveOutcome): void;
  };
}

/**
 * Messages the broker may push to a flow's request subscription before the agent has taken them: a burst this
 * large is not dropped (a non-persistent topic drops what a subscription has no permits for).
 */
export const REQUEST_WINDOW = 4000;
/** Default of `FlowRuntimeDeps.publishRetryMs`. */
export const DEFAULT_PUBLISH_RETRY_MS = 60_000;
/** Defaults of `FlowRuntimeDeps.librarianTimeoutMs` / `librarianMaxInFlight`. */
export const DEFAULT_LIBRARIAN_TIMEOUT_MS = 120_000;
export const DEFAULT_LIBRARIAN_MAX_IN_FLIGHT = 64;
/** How long a stopping flow waits for librarian saves still in flight. */
const DOCUMENT_DRAIN_MS = 5_000;
/** The transports' code for "never written: sending again cannot duplicate it" (websocket-transport.ts). */
const NOT_CONNECTED = 'TG_TRANSPORT_NOT_CONNECTED';

export class FlowRuntime {
  private readonly consumers: Consumer[] = [];
  private readonly producers: Producer[] = [];
  private readonly clients: RequestClient<unknown, unknown>[] = [];
  private documents: DocumentSaver | undefined;
  private inFlight = 0;

  private constructor(
    readonly definition: FlowDefinition,
    private readonly deps: FlowRuntimeDeps,
    private readonly logger: Logger,
  ) {}

  static async start(definition: FlowDefinition, deps: FlowRuntimeDeps): Promise<FlowRuntime> {
    const logger = deps.logger.child({ workspace: definition.workspace, flow: definition.flow });
    const runtime = new FlowRuntime(definition, deps, logger);
    try {
      await runtime.open();
    } catch (error) {
      await runtime.stop();
      throw error;
    }
    logger.info({ request: definition.topics.request }, 'Flow started');
    return runtime;
  }

  get busy(): number {
    return this.inFlight;
  }

  /** Stop receiving, let in-flight iterations finish, then close everything. */
  async stop(): Promise<void> {
    await Promise.all(
      this.consumers
        .splice(0)
        .map((c) => c.close().catch((error: unknown) => this.logger.warn({ err: error }, 'Closing a request consumer failed'))),
    );
    while (this.inFlight > 0) await new Promise((r) => setTimeout(r, 20));
    await this.documents?.drain(DOCUMENT_DRAIN_MS);
    await Promise.allSettled([...this.clients.map((c) => c.close()), ...this.producers.map((p) => p.close())]);
    this.logger.info('Flow stopped');
  }

  private get publishRetryMs(): number {
    return this.deps.publishRetryMs ?? DEFAULT_PUBLISH_RETRY_MS;
  }

  /**
   * Publish, retrying while the broker is unreachable (bounded by `publishRetryMs`). With `onlyIfUnsent`, only
   * failures where the message was certainly never written are retried, so a retry cannot publish it twice.
   */
  private async publish(producer: Producer, message: OutgoingMessage, onlyIfUnsent: boolean): Promise<void> {
    const deadline = Date.now() + this.publishRetryMs;
    for (let attempt = 1; ; attempt++) {
      try {
        await producer.send(message);
        return;
      } catch (error) {
        const retriable =
          error instanceof TransportError && error.retriable && (!onlyIfUnsent || error.code === NOT_CONNECTED);
        const left = deadline - Date.now();
        if (!retriable || left <= 0) throw error;
        const delay = Math.min(left, 5000, 250 * 2 ** Math.min(attempt - 1, 10));
        this.logger.warn({ err: error, topic: producer.topic, attempt, delayMs: delay }, 'Publish failed; retrying');
        await sleep(delay);
      }
    }
  }

  /**
   * A `next` message goes to a non-persistent topic, which drops it unless a subscription exists: hand it over
   * only while the transport is whole (our own request consumer subscribed), waiting up to `publishRetryMs`.
   */
  private whenConnected(): Promise<void> {
    return whenConnected(this.deps.transport, this.publishRetryMs, 'cannot hand the conversation over to its next iteration');
  }


  private topic(name: string): string | undefined {
    const queue = this.definition.topics[name];
    return queue ? queueToTopic(queue) : undefined;
  }

  private async producer(name: string): Promise<Producer | undefined> {
    const topic = this.topic(name);
    if (!topic) return undefined;
    const producer = await this.deps.transport.createProducer(topic);
    this.producers.push(producer);
    const queue = this.definition.topics[name] ?? topic;
    const instrument = this.deps.instrument;
    if (!instrument) return producer;
    return {
      topic: producer.topic,
      send: async (message) => {
        await producer.send(message);
        instrument.produced(queue);
      },
      close: () => producer.close(),
    };
  }

  private async client<Req, Res extends { error: { type: string } | null }>(
    service: string,
    requestCodec: Codec<Req>,
    responseCodec: Codec<Res>,
  ): Promise<RequestClient<Req, Res> | undefined> {
    const requestTopic = this.topic(`${service}-request`);
    const responseTopic = this.topic(`${service}-response`);
    if (!requestTopic || !responseTopic) return undefined;
    const instrument = this.deps.instrument;
    const client = new RequestClient({
      ...(instrument
        ? {
            observer: {
              errorOf: (response: Res) => response.error?.type,
              ended: (outcome) => instrument.downstream(`${service}-request`, outcome),
            },
          }
        : {}),
      transport: this.deps.transport,
      requestTopic,
      responseTopic,
      requestCodec,
      responseCodec,
      timeoutMs: this.deps.requestTimeoutMs,
      logger: this.logger,
    });
    this.clients.push(client as RequestClient<unknown, unknown>);
    await client.start();
    return client;
  }

  private async open(): Promise<void> {
    const response = (await this.producer('response'))!;
    const next = (await this.producer('next'))!;
    const explainability = await this.producer('explainability');
    const prompt = (await this.client('prompt', promptRequestCodec, promptResponseCodec))!;
    const tools: ToolClients = {
      prompt,
      graphRag: await this.client('graph-rag', graphRagQueryCodec, graphRagResponseCodec),
      mcpTool: await this.client('mcp-tool', toolRequestCodec, toolResponseCodec),
      structuredQuery: await this.client('structured-query', structuredQueryRequestCodec, structuredQueryResponseCodec),
      embeddings: await this.client('embeddings', embeddingsRequestCodec, embeddingsResponseCodec),
      rowEmbeddings: await this.client('row-embeddings-query', rowEmbeddingsRequestCodec, rowEmbeddingsResponseCodec),
      toolService: (descriptor) => this.deps.toolServices.get(descriptor),
    };
    const librarian = await this.client('librarian', librarianRequestCodec, librarianResponseCodec);
    const documents = librarian
      ? new DocumentSaver({
          client: librarian,
          maxInFlight: this.deps.librarianMaxInFlight ?? DEFAULT_LIBRARIAN_MAX_IN_FLIGHT,
          timeoutMs: this.deps.librarianTimeoutMs ?? DEFAULT_LIBRARIAN_TIMEOUT_MS,
          logger: this.logger,
          onOutcome: (outcome) => this.deps.instrument?.documentSaved?.(outcome),
        })
      : undefined;
    this.documents = documents;

    const handler = new RequestHandler({
      definition: this.definition,
      deps: this.deps,
      logger: this.logger,
      producers: { response, next, ...(explainability ? { explainability } : {}) },
      prompt,
      tools,
      publish: (producer, message, onlyIfUnsent) => this.publish(producer, message, onlyIfUnsent),
      whenConnected: () => this.whenConnected(),
      ...(documents ? { documents } : {}),
    });

    this.deps.instrument?.subscribing?.(this.definition.topics.request ?? '');
    // Each consumer of the Shared subscription has its own flow-control window. Where the transport caps one
    // (the WebSocket API: 1000 messages), several consumers make up the window; elsewhere one consumer has it all
    // (several consumers on one native connection were seen to lose messages of a burst).
    const cap = this.deps.transport.maxReceiverQueueSize ?? REQUEST_WINDOW;
    const consumers = this.deps.requestConsumers ?? Math.ceil(REQUEST_WINDOW / cap);
    const receiverQueueSize = Math.min(cap, Math.ceil(REQUEST_WINDOW / consumers));
    for (let i = 0; i < consumers; i++) {
      const consumer = await this.deps.transport.subscribe({
        receiverQueueSize,
        topic: this.topic('request')!,
        subscription: flowSubscriptionName(this.deps.processorId, this.definition.workspace, this.definition.flow, 'request'),
        subscriptionType: 'Shared',
        handler: async (message) => {
          this.inFlight++;
          try {
            await handler.handle(message);
          } finally {
            this.inFlight--;
          }
        },
      });
      this.consumers.push(consumer);
    }
  }

}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
