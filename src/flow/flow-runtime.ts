/**
 * The lifecycle of one running flow of one workspace: the shared subscription on its request queue, its
 * producers (`next`, `response`, `explainability`) and its clients of TrustGraph services. Producers and
 * clients start first, the consumer last, so nothing is received before it can be answered; stopping goes
 * the other way. Each consumed message is handled by RequestHandler (request-handler.ts).
 */
import { RecentRequests } from './recent-requests.js';
import { replyTimeouts } from './service-timeouts.js';
import type { Logger } from 'pino';
import {
  aggregationTopic,
  type Consumer,
  type HedgePolicy,
  flowSubscriptionName,
  type IncomingMessage,
  type Producer,
  type Properties,
  queueToTopic,
  RequestClient,
} from '../bus/index.js';
import type { FlowDefinition } from '../config/index.js';
import type { ToolClients } from '../tools/index.js';
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
  type Codec,
} from '../wire/index.js';
import { DocumentSaver } from './document-saver.js';
import { DEFAULT_AGGREGATION_TIMEOUT_MS, FanInConsumer } from './fan-in-consumer.js';
import type { FlowRuntimeDeps } from './ports.js';
import type { FlowService } from '../wire/index.js';
import { DEFAULT_PUBLISH_RETRY_MS, PublishPolicy, RESENT_PROPERTY } from './publish-policy.js';
import { RequestHandler } from './request-handler.js';

/**
 * Messages the broker may push to a flow's request subscription before the agent has taken them, at least: a
 * burst this large is not dropped (a non-persistent topic drops what a subscription has no permits for). The
 * window grows to `--concurrency` where that is larger.
 */
export const REQUEST_WINDOW = 4000;
/** Defaults of `FlowRuntimeDeps.librarianTimeoutMs` / `librarianMaxInFlight`. */
export const DEFAULT_LIBRARIAN_TIMEOUT_MS = 120_000;
export const DEFAULT_LIBRARIAN_MAX_IN_FLIGHT = 64;
/** How long a stopping flow waits for librarian saves still in flight. */
const DOCUMENT_DRAIN_MS = 5_000;

/**
 * The services that only read, so asking one twice for an answer is harmless (a second model call costs tokens,
 * nothing else): when a broker restart may have taken the reply, and when the first reply is overdue (a hedged
 * request, service-hedging.ts). An MCP tool, a tool service or a librarian save may act, and is never sent twice.
 */
const REPEATABLE_SERVICES: ReadonlySet<FlowService> = new Set<FlowService>(['prompt', 'graph-rag', 'structured-query', 'embeddings', 'row-embeddings-query']);

export class FlowRuntime {
  private readonly consumers: Consumer[] = [];
  private readonly producers: Producer[] = [];
  private readonly clients: RequestClient<unknown, unknown>[] = [];
  private documents: DocumentSaver | undefined;
  private fanIn: FanInConsumer | undefined;
  private inFlight = 0;
  /** The requests running here or ended lately (shared by this replica's flows), to tell a broker's second delivery of one. */
  private readonly recent: RecentRequests;
  private stopping = false;
  private keptCount = 0;

  private constructor(
    readonly definition: FlowDefinition,
    private readonly deps: FlowRuntimeDeps,
    private readonly logger: Logger,
  ) {
    this.recent = deps.recent ?? new RecentRequests();
  }

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
    // From here on, `next` requests go to the bus, where another replica can take them.
    this.stopping = true;
    await Promise.all(
      this.consumers
        .splice(0)
        .map((c) => c.close().catch((error: unknown) => this.logger.warn({ err: error }, 'Closing a request consumer failed'))),
    );
    while (this.inFlight > 0) await new Promise((r) => setTimeout(r, 20));
    await this.fanIn?.close().catch((error: unknown) => this.logger.warn({ err: error }, 'Closing the aggregation consumer failed'));
    const unsaved = (await this.documents?.stop(DOCUMENT_DRAIN_MS)) ?? 0;
    if (unsaved > 0) {
      this.logger.warn(
        { unsaved },
        `Stopping with ${unsaved} librarian document(s) unsaved: the librarian did not answer within ${DOCUMENT_DRAIN_MS / 1000} s ` +
          '(counted as failed in tg_agent_librarian_documents_total)',
      );
    }
    await Promise.allSettled([...this.clients.map((c) => c.close()), ...this.producers.map((p) => p.close())]);
    this.logger.info('Flow stopped');
  }

  private async handled(handler: RequestHandler, message: IncomingMessage, kept = false): Promise<void> {
    const id = message.properties.id;
    const key = id === undefined || kept ? undefined : RecentRequests.keyOf(id, message.payload);
    // Delivered again by the broker, or sent again after a send the broker did not confirm: perhaps a second copy.
    const again = message.redeliveryCount > 0 || message.properties[RESENT_PROPERTY] !== undefined;
    if (key !== undefined && again && (await this.leftAsTaken(id!, key, message))) return;
    if (key !== undefined && !again && this.recent.isRunning(key)) {
      // A copy neither marked nor redelivered (a client's or a broker client's second send): the first is running.
      this.logger.info({ id }, 'Agent request received while an identical one (same id, same bytes) runs here; the copy is left');
      await message.ack().catch(() => undefined);
      return;
    }
    this.inFlight++;
    if (key !== undefined) this.recent.begin(key);
    let givenBack = false;
    try {
      givenBack = !(await handler.handle(message, kept));
    } finally {
      // One given back to the broker is meant to be delivered again.
      if (key !== undefined) this.recent.end(key, !givenBack);
      this.inFlight--;
    }
  }

  /**
   * Whether a request that may be a second copy was taken already, here or by another replica (request-claims.ts);
   * if so it is acknowledged and left. Given back by a replica, or taken by one that no longer answers: it runs.
   */
  private async leftAsTaken(id: string, key: string, message: IncomingMessage): Promise<boolean> {
    const cause = message.redeliveryCount > 0 ? 'the broker lost an ack' : 'sent again after a send the broker did not confirm';
    if (this.recent.has(key)) {
      this.logger.info({ id, cause }, 'Agent request delivered again after this replica took it; the second delivery is left');
      await message.ack().catch(() => undefined);
      return true;
    }
    this.inFlight++;
    try {
      const holder = await this.deps.claims?.holderOf(key);
      if (holder !== undefined) {
        this.logger.info({ id, holder, cause }, 'Agent request delivered again after another replica took it; the second delivery is left');
        await message.ack().catch(() => undefined);
        return true;
      }
    } finally {
      this.inFlight--;
    }
    this.logger.info({ id, cause, redeliveryCount: message.redeliveryCount }, 'Agent request delivered again, not taken here before: running it');
    return false;
  }

  /** Whether this flow runs its own `next` requests: they are addressed to its request queue, and not meant for the bus. */
  private keepsNext(): boolean {
    const { next, request } = this.definition.topics;
    return !this.deps.nextOnBus && next !== undefined && next === request;
  }

  /**
   * Runs a `next` request here, as if it had come back from the broker (the gate checks its signature as it
   * would then), but without the round trip, in which a non-persistent topic may drop it.
   */
  private keepNext(handler: RequestHandler, payload: Buffer, properties: Properties): boolean {
    if (this.stopping) return false;
    const noop = async (): Promise<void> => {};
    const message: IncomingMessage = {
      messageId: `kept-${++this.keptCount}`,
      topic: this.topic('request')!,
      payload,
      properties,
      redeliveryCount: 0,
      ack: noop,
      nack: noop,
    };
    this.handled(handler, message, true).catch((error: unknown) => this.logger.error({ err: error, id: properties.id }, 'A kept next request failed'));
    return true;
  }

  private topic(name: string): string | undefined {
    const queue = this.definition.topics[name];
    return queue ? queueToTopic(queue) : undefined;
  }

  private async producer(name: string): Promise<Producer | undefined> {
    const topic = this.topic(name);
    if (!topic) return undefined;
    // The gateway reads the responses, and the agent's replicas its `next` requests (the flow's own request topic):
    // after a reconnect they wait for that subscription to be back, which a moved topic's subscribers rejoin on
    // their own schedule.
    const producer = await this.deps.transport.createProducer(topic, { awaitSubscriber: name === 'response' || name === 'next' });
    this.producers.push(producer);
    const queue = this.definition.topics[name] ?? topic;
    const telemetry = this.deps.telemetry;
    return {
      topic: producer.topic,
      send: async (message) => {
        await producer.send(message);
        telemetry.produced(queue);
      },
      close: () => producer.close(),
    };
  }

  /** The request client's waits for `service` (the librarian's saves also carry their own timeout). */
  private waitsFor(service: FlowService): { timeoutMs: number; gapTimeoutMs: number } {
    const { firstMs, gapMs } = replyTimeouts(this.deps.timeouts, service);
    return { timeoutMs: firstMs, gapTimeoutMs: gapMs };
  }

  /** Whether a call to `service` may be sent twice, and its hedge policy when it is hedged. */
  private repeats(service: FlowService): { repeatable: boolean; hedge?: HedgePolicy } {
    if (!REPEATABLE_SERVICES.has(service)) return { repeatable: false };
    const hedge = this.deps.hedging?.policyFor(service);
    return { repeatable: true, ...(hedge ? { hedge } : {}) };
  }

  private async client<Req, Res extends { error: { type: string } | null }>(
    service: FlowService,
    requestCodec: Codec<Req>,
    responseCodec: Codec<Res>,
  ): Promise<RequestClient<Req, Res> | undefined> {
    const requestTopic = this.topic(`${service}-request`);
    const responseTopic = this.topic(`${service}-response`);
    if (!requestTopic || !responseTopic) return undefined;
    const telemetry = this.deps.telemetry;
    const client = new RequestClient({
      observer: {
        errorOf: (response: Res) => response.error?.type,
        ended: (outcome) => telemetry.downstream(`${service}-request`, outcome),
      },
      transport: this.deps.transport,
      requestTopic,
      responseTopic,
      requestCodec,
      responseCodec,
      ...this.waitsFor(service),
      ...this.repeats(service),
      ...(this.deps.callSlots ? { slots: this.deps.callSlots.for(service, requestTopic) } : {}),
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
    const fanInTopic = aggregationTopic(this.topic('request')!, this.deps.aggregation?.topicTemplate);
    const aggregation = await this.deps.transport.createProducer(fanInTopic);
    this.producers.push(aggregation);
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
          onOutcome: (outcome) => this.deps.telemetry.documentSaved(outcome),
        })
      : undefined;
    this.documents = documents;

    const { gate, telemetry } = this.deps;
    const output = {
      definition: this.definition,
      transport: this.deps.transport,
      logger: this.logger,
      producers: { response, next, aggregation, ...(explainability ? { explainability } : {}) },
      publisher: new PublishPolicy(this.deps.transport, this.deps.publishRetryMs ?? DEFAULT_PUBLISH_RETRY_MS, this.logger),
      ...(gate ? { gate } : {}),
      telemetry,
      ...(documents ? { documents } : {}),
      ...(this.deps.maxRequestBytes === undefined ? {} : { maxRequestBytes: this.deps.maxRequestBytes }),
      ...(this.keepsNext() ? { keepNext: (payload: Buffer, properties: Properties) => this.keepNext(handler, payload, properties) } : {}),
    };
    const handler: RequestHandler = new RequestHandler({ ...output, deps: this.deps, prompt, tools });

    // Before the request consumers: a supervisor's fan-in must be collected from its first fan-out on.
    this.fanIn = new FanInConsumer(
      output,
      {
        topic: fanInTopic,
        subscription: flowSubscriptionName(this.deps.processorId, this.definition.workspace, this.definition.flow, 'aggregation'),
        timeoutMs: this.deps.aggregation?.timeoutMs ?? DEFAULT_AGGREGATION_TIMEOUT_MS,
      },
      telemetry,
    );
    await this.fanIn.start(this.deps.transport);

    this.deps.telemetry.subscribing(this.definition.topics.request ?? '');
    // Each consumer of the Shared subscription has its own flow-control window. Where the transport caps one
    // (the WebSocket API: 1000 messages), several consumers make up the window; elsewhere one consumer has it all
    // (several consumers on one native connection were seen to lose messages of a burst).
    // The window is at least `--concurrency`: an agent set to hold 10 000 conversations must be able to take a
    // burst of 10 000 requests, which a smaller window would leave the broker to drop.
    const window = Math.max(REQUEST_WINDOW, this.deps.limit.limit);
    const cap = this.deps.transport.maxReceiverQueueSize ?? window;
    const consumers = this.deps.requestConsumers ?? Math.ceil(window / cap);
    const receiverQueueSize = Math.min(cap, Math.ceil(window / consumers));
    for (let i = 0; i < consumers; i++) {
      const consumer = await this.deps.transport.subscribe({
        receiverQueueSize,
        topic: this.topic('request')!,
        subscription: flowSubscriptionName(this.deps.processorId, this.definition.workspace, this.definition.flow, 'request'),
        subscriptionType: 'Shared',
        handler: (message) => this.handled(handler, message),
      });
      this.consumers.push(consumer);
    }
  }
}
