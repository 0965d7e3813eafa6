/**
 * One running flow of one workspace: the shared subscription on its request queue, its producers
 * (`next`, `response`, `explainability`) and its clients of TrustGraph services. Producers and clients
 * start first, the consumer last, so nothing is received before it can be answered.
 */
import type { Logger } from 'pino';
import { RequestClient } from '../bus/request-client.js';
import { flowSubscriptionName, queueToTopic } from '../bus/topics.js';
import type { Consumer, IncomingMessage, Producer, Properties, Transport } from '../bus/transport.js';
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
  /** TrustGraph's generic consumer/producer metrics. */
  instrument?: {
    consumed(consumer: string, seconds: number, ok: boolean): void;
    produced(producer: string): void;
  };
}

export class FlowRuntime {
  private consumer: Consumer | undefined;
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
    await this.consumer?.close().catch((error: unknown) => this.logger.warn({ err: error }, 'Closing the request consumer failed'));
    this.consumer = undefined;
    while (this.inFlight > 0) await new Promise((r) => setTimeout(r, 20));
    await Promise.allSettled([...this.clients.map((c) => c.close()), ...this.producers.map((p) => p.close())]);
    this.logger.info('Flow stopped');
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

  private async client<Req, Res>(
    service: string,
    requestCodec: Codec<Req>,
    responseCodec: Codec<Res>,
  ): Promise<RequestClient<Req, Res> | undefined> {
    const requestTopic = this.topic(`${service}-request`);
    const responseTopic = this.topic(`${service}-response`);
    if (!requestTopic || !responseTopic) return undefined;
    const client = new RequestClient({
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
    const outputFor = (id: string, request: AgentRequest | undefined): IterationOutput => ({
      respond: (message: AgentResponse) => response.send({ payload: agentResponseCodec.encode(message), properties: { id } }),
      next: (message: AgentRequest) =>
        next.send({
          payload: agentRequestCodec.encode(message),
          properties: { ...(this.deps.gate?.nextProperties(message, id) ?? {}), id },
        }),
      ...(explainability && request
        ? { explain: (triples) => explainability.send({ payload: triplesCodec.encode(triples), properties: { id } }) }
        : {}),
    });

    const handle = async (message: IncomingMessage): Promise<void> => {
      const id = message.properties.id ?? 'unknown';
      let request: AgentRequest;
      try {
        request = agentRequestCodec.decode(message.payload);
      } catch (error) {
        const text = error instanceof Error ? error.message : String(error);
        this.logger.error({ id, err: error }, `Refusing an agent request that cannot be decoded: ${text}`);
        await outputFor(id, undefined).respond(errorResponse(text, ''));
        return;
      }
      const registry = this.deps.registryFor(workspace);
      const events = this.deps.eventsFor(this.definition, request, id);
      const refusal = this.deps.gate?.check(this.definition, request, message.properties, registry);
      if (refusal) {
        this.logger.warn({ id, kind: refusal.kind }, `Request refused: ${refusal.message}`);
        events.refused?.(refusal);
        await outputFor(id, request).respond(errorResponse(refusal.message));
        return;
      }
      const result = await runIteration(
        {
          workspace,
          flow,
          registry,
          prompt,
          tools,
          output: outputFor(id, request),
          events,
          logger: this.logger.child({ id }),
          settings: { maxIterations: this.deps.maxIterations, strictTools: this.deps.strictTools },
        },
        request,
      );
      events.done?.(result);
    };

    this.consumer = await this.deps.transport.subscribe({
      topic: this.topic('request')!,
      subscription: flowSubscriptionName(this.deps.processorId, workspace, flow, 'request'),
      subscriptionType: 'Shared',
      handler: async (message) => {
        this.inFlight++;
        const started = performance.now();
        const consumer = this.definition.topics.request ?? '';
        try {
          await this.deps.limit.run(() => handle(message));
          await message.ack();
          this.deps.instrument?.consumed(consumer, (performance.now() - started) / 1000, true);
        } catch (error) {
          this.deps.instrument?.consumed(consumer, (performance.now() - started) / 1000, false);
          // Only a failure to publish gets here: the message is redelivered where the topic keeps it.
          this.logger.error({ err: error }, 'Could not answer an agent request; negatively acknowledging it');
          await message.nack().catch(() => {});
        } finally {
          this.inFlight--;
        }
      },
    });
  }
}
