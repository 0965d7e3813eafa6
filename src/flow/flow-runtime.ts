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
import type { Consumer, IncomingMessage, OutgoingMessage, Producer, Properties, Transport } from '../bus/transport.js';
import type { FlowDefinition } from '../config/flows.js';
import { runIteration, type IterationEvents, type IterationOutput, type IterationResult } from '../agent/iteration.js';
import { errorResponse } from '../agent/responses.js';
import type { ToolClients } from '../tools/run/tool-clients.js';
import type { ToolServiceClients } from '../tools/run/tool-service-clients.js';
import type { ToolRegistry } from '../tools/registry.js';
import {
  agentRequestCodec,
  agentResponseCodec,
  embeddingsRequestCodec,
  embeddingsResponseCodec,
  graphRagQueryCodec,
  graphRagResponseCodec,
  promptRequestCodec,
  promptResponseCodec,
  rowEmbeddingsRequestCodec,
  rowEmbeddingsResponseCodec,
  structuredQueryRequestCodec,
  structuredQueryResponseCodec,
  toolRequestCodec,
  toolResponseCodec,
  triplesCodec,
  type AgentRequest,
  type AgentResponse,
  type Codec,
} from '../wire/index.js';
import type { ConcurrencyLimit } from './concurrency-limit.js';

/** Why a request was refused before it ran. */
export interface Refusal {
  kind: 'group-policy' | 'signature' | 'invalid-state';
  message: string;
}

/** What a request must pass before it is run (group policy, iteration signature); see src/security. */
export interface RequestGate {
  /** A refusal ends the dialog with an error; undefined lets the request through. */
  check(flow: FlowDefinition, request: AgentRequest, properties: Properties, registry: ToolRegistry): Refusal | undefined;
  /** Extra properties for a `next` message (the iteration signature). */
  nextProperties(request: AgentRequest, id: string): Properties;
}

/** Iteration events plus what happens around the iteration: a refusal, and the end of the message's handling. */
export type IterationHooks = IterationEvents & {
  refused?(refusal: Refusal): void;
  done?(result: IterationResult): void;
};

export interface FlowRuntimeDeps {
  transport: Transport;
  processorId: string;
  requestTimeoutMs: number;
  maxIterations: number;
  strictTools: boolean;
  logger: Logger;
  registryFor(workspace: string): ToolRegistry;
  limit: ConcurrencyLimit;
  toolServices: ToolServiceClients;
  /** Per-iteration hooks for metrics and the audit trail. */
  eventsFor(flow: FlowDefinition, request: AgentRequest, id: string): IterationHooks;
  gate?: RequestGate;
  /**
   * How long a publish that failed because the broker was unreachable is retried, and how long a `next`
   * message waits for the broker connection to be whole again, before the iteration gives up.
   * Default 60000 ms.
   */
  publishRetryMs?: number;
  /**
   * Requests waiting for a concurrency slot (across flows) beyond which a new one is refused at once with an
   * error response. Default DEFAULT_MAX_QUEUED.
   */
  maxQueued?: number;
  /** Consumers on the flow's Shared request subscription. Default DEFAULT_REQUEST_CONSUMERS. */
  requestConsumers?: number;
  /** TrustGraph's generic consumer, producer and downstream-call metrics. */
  instrument?: {
    /** A `next` message was handed to the broker / one arrived (TrustGraph's agent counts neither). */
    next?(event: 'published' | 'received'): void;
    /** A request was refused because `maxQueued` requests were waiting. */
    overloaded?(): void;
    consumed(consumer: string, seconds: number, ok: boolean): void;
    produced(producer: string): void;
    /** A call to a TrustGraph service ended; `targetService` is the request spec name, e.g. `prompt-request`. */
    downstream(targetService: string, outcome: { seconds: number; status: 'ok' | 'timeout' | 'error'; errorType?: string }): void;
  };
}

/** Default of `FlowRuntimeDeps.maxQueued`: a burst this large waits in memory (each holds its payload). */
export const DEFAULT_MAX_QUEUED = 10_000;
/** Default of `FlowRuntimeDeps.requestConsumers`. */
export const DEFAULT_REQUEST_CONSUMERS = 4;
/** Default of `FlowRuntimeDeps.publishRetryMs`. */
export const DEFAULT_PUBLISH_RETRY_MS = 60_000;
/** The transports' code for "never written: sending again cannot duplicate it" (websocket-transport.ts). */
const NOT_CONNECTED = 'TG_TRANSPORT_NOT_CONNECTED';
/** Error texts sent back to clients are cut to this many characters. */
const MAX_ERROR_TEXT = 2000;

/** Whether a dialog's final message (`end_of_dialog`) has been published for the message being handled. */
interface DialogState {
  /** The end-of-dialog message has been handed to the producer. */
  ended: boolean;
  /**
   * Responses handed to the producer but not yet acknowledged by the broker. They are not awaited one by one
   * — a producer writes frames in order, so a conversation's messages keep theirs — but all are awaited
   * before the `next` message is published and before the request is acked.
   */
  pending: Promise<void>[];
  /** Explainability triples in flight (a persistent topic, slower to acknowledge): awaited only before the ack. */
  background: Promise<void>[];
}

/** Start a publish without waiting for its acknowledgement; `settle` awaits them all (and throws the first failure). */
function track(list: Promise<void>[], publish: Promise<void>): Promise<void> {
  list.push(publish);
  publish.catch(() => {}); // observed in settle(); never an unhandled rejection
  return Promise.resolve();
}

async function settle(list: Promise<void>[]): Promise<void> {
  while (list.length > 0) await Promise.all(list.splice(0));
}

export class FlowRuntime {
  private readonly consumers: Consumer[] = [];
  private readonly producers: Producer[] = [];
  private readonly clients: RequestClient<unknown, unknown>[] = [];
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

    const { workspace, flow } = this.definition;
    const outputFor = (id: string, request: AgentRequest | undefined, dialog: DialogState): IterationOutput => ({
      respond: (message: AgentResponse) => {
        if (message.end_of_dialog) dialog.ended = true;
        return track(dialog.pending, this.publish(response, { payload: agentResponseCodec.encode(message), properties: { id } }, false));
      },
      next: async (message: AgentRequest) => {
        const payload = agentRequestCodec.encode(message);
        const properties = { ...(this.deps.gate?.nextProperties(message, id) ?? {}), id };
        // This iteration's responses reach the client before anything of the next iteration can.
        await settle(dialog.pending);
        await this.whenConnected();
        await this.publish(next, { payload, properties }, true);
        this.deps.instrument?.next?.('published');
      },
      ...(explainability && request
        ? {
            explain: (triples) =>
              track(
                dialog.background,
                explainability.send({ payload: triplesCodec.encode(triples), properties: { id } }).catch((error: unknown) => {
                  // Provenance never fails a dialog.
                  this.logger.warn({ err: error, id }, 'Could not publish explainability triples; the dialog goes on');
                }),
              ),
          }
        : {}),
    });

    const refuseOverloaded = async (message: IncomingMessage, dialog: DialogState): Promise<void> => {
      const id = message.properties.id ?? 'unknown';
      const text =
        `the agent is overloaded: ${this.deps.limit.queued} requests are waiting for one of its ` +
        `${this.deps.limit.limit} concurrency slots (limit ${this.deps.maxQueued ?? DEFAULT_MAX_QUEUED}); ` +
        `the request was refused, send it again later`;
      this.logger.warn({ id, queued: this.deps.limit.queued }, 'Refusing a request: too many are waiting for a slot');
      this.deps.instrument?.overloaded?.();
      await outputFor(id, undefined, dialog).respond(errorResponse(text));
    };

    const handle = async (message: IncomingMessage, dialog: DialogState): Promise<void> => {
      const id = message.properties.id ?? 'unknown';
      let request: AgentRequest;
      try {
        request = agentRequestCodec.decode(message.payload);
      } catch (error) {
        const text = clip(error instanceof Error ? error.message : String(error));
        this.logger.error({ id, err: error }, `Refusing an agent request that cannot be decoded: ${text}`);
        await outputFor(id, undefined, dialog).respond(errorResponse(text, ''));
        return;
      }
      if (request.history.length > 0) this.deps.instrument?.next?.('received');
      const output = outputFor(id, request, dialog);
      try {
        const registry = this.deps.registryFor(workspace);
        const events = this.deps.eventsFor(this.definition, request, id);
        const refusal = this.deps.gate?.check(this.definition, request, message.properties, registry);
        if (refusal) {
          this.logger.warn({ id, kind: refusal.kind }, `Request refused: ${refusal.message}`);
          events.refused?.(refusal);
          await output.respond(errorResponse(refusal.message));
          return;
        }
        const result = await runIteration(
          {
            workspace,
            flow,
            registry,
            prompt,
            tools,
            output,
            events,
            logger: this.logger.child({ id }),
            settings: { maxIterations: this.deps.maxIterations, strictTools: this.deps.strictTools },
          },
          request,
        );
        events.done?.(result);
      } catch (error) {
        // A publish that failed even after retries: nothing more can be sent; the caller nacks.
        if (error instanceof TransportError) throw error;
        // Anything else (a hook or the gate threw): never leave the dialog without a final message.
        const text = clip(error instanceof Error ? error.message : String(error));
        if (dialog.ended) {
          this.logger.error({ id, err: error }, `Failure after the dialog ended: ${text}`);
          return;
        }
        this.logger.error({ id, err: error }, `Agent request failed unexpectedly; ending the dialog with an error: ${text}`);
        await output.respond(errorResponse(text));
      }
    };

    const requestTopic = this.topic('request')!;
    // A non-persistent topic redelivers nothing, so holding a request's ack until its iteration is done only
    // holds the broker's flow-control window shut, and the broker drops what it cannot deliver (a burst, our
    // own `next` messages). So such requests are acked on arrival and wait here for a slot, up to `maxQueued`.
    const ackOnArrival = requestTopic.startsWith('non-persistent://');
    const maxQueued = this.deps.maxQueued ?? DEFAULT_MAX_QUEUED;
    // Each consumer of the Shared subscription has its own flow-control window (the WebSocket API caps one at
    // 1000 messages, plus 1000 in the broker's own queue for it): several consumers absorb a larger burst.
    const consumers = this.deps.requestConsumers ?? DEFAULT_REQUEST_CONSUMERS;
    for (let i = 0; i < consumers; i++) await this.subscribeRequests(requestTopic, ackOnArrival, maxQueued, handle, refuseOverloaded);
  }

  private async subscribeRequests(
    requestTopic: string,
    ackOnArrival: boolean,
    maxQueued: number,
    handle: (message: IncomingMessage, dialog: DialogState) => Promise<void>,
    refuseOverloaded: (message: IncomingMessage, dialog: DialogState) => Promise<void>,
  ): Promise<void> {
    const { workspace, flow } = this.definition;
    const consumer = await this.deps.transport.subscribe({
      topic: requestTopic,
      subscription: flowSubscriptionName(this.deps.processorId, workspace, flow, 'request'),
      subscriptionType: 'Shared',
      handler: async (message) => {
        this.inFlight++;
        const started = performance.now();
        const consumer = this.definition.topics.request ?? '';
        const dialog: DialogState = { ended: false, pending: [], background: [] };
        if (ackOnArrival) await message.ack().catch(() => {});
        const overloaded = this.deps.limit.queued >= maxQueued;
        try {
          try {
            if (overloaded) await refuseOverloaded(message, dialog);
            else await this.deps.limit.run(() => handle(message, dialog));
          } finally {
            // Outside the concurrency slot: the next request need not wait for these acknowledgements.
            await settle(dialog.pending);
            await settle(dialog.background);
          }
          // Acked only once every message of this iteration is with the broker.
          await message.ack();
          this.deps.instrument?.consumed(consumer, (performance.now() - started) / 1000, true);
        } catch (error) {
          this.deps.instrument?.consumed(consumer, (performance.now() - started) / 1000, false);
          // Only a failure to publish (after retries) gets here: the message is redelivered where the topic keeps
          // it; TrustGraph's request topics are non-persistent, so there it is gone (docs/reliability.md).
          this.logger.error(
            { err: error, id: message.properties.id },
            'Could not answer an agent request (the broker stayed unreachable); negatively acknowledging it',
          );
          await message.nack().catch(() => {});
        } finally {
          this.inFlight--;
        }
      },
    });
    this.consumers.push(consumer);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function clip(text: string): string {
  return text.length <= MAX_ERROR_TEXT ? text : `${text.slice(0, MAX_ERROR_TEXT)}… (${text.length} characters)`;
}
