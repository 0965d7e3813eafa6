/**
 * `ask` plays TrustGraph's gateway: it subscribes (Exclusive, unique name) to the flow's response topic and,
 * with a second, observer subscription, to the request topic (a non-persistent topic delivers every message to
 * every subscription, so the observer sees each `next` message the agent publishes), then publishes the
 * AgentRequest with a fresh uuid `id` property and collects the responses carrying that id until one has
 * `end_of_dialog: true`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { queueToTopic } from '../../../src/bus/topics.js';
import type { Consumer, IncomingMessage, Producer, Transport } from '../../../src/bus/transport.js';
import { agentRequestCodec, agentResponseCodec, type AgentRequest, type AgentResponse } from '../../../src/wire/index.js';
import { agentFlowTopics } from '../../../dev/flow-config.js';
import { renderReport, type Report } from '../failure-report.js';
import { AskTimeoutError, type AskOptions, type AskResult, type ObservedMessage } from './harness-types.js';

/** Where the gateway asks: the harness's workspace, its transport and its producers. */
export interface Gateway {
  readonly transport: Transport;
  readonly workspace: string;
  readonly defaultFlow: string;
  /** How long to wait after end_of_dialog for late `next` messages, unless the ask says. */
  readonly defaultSettleMs: number;
  producerFor(topic: string): Promise<Producer>;
  /**
   * What the harness knows when an ask times out, while the ask's subscriptions still exist: whether the agent
   * took the request (its log, the model's calls) and what the broker sent to each subscription.
   */
  diagnose?(id: string, topics: { request: string; response: string }): Report | Promise<Report>;
  /**
   * How many messages the broker took on the flow's request topic and never sent the agent's subscription.
   * A non-persistent topic drops a message for a subscription whose connection is backed up at that moment,
   * which no agent can know of (docs/reliability.md).
   */
  droppedForAgent?(requestTopic: string, flow: string): Promise<number>;
}

/** What arrives for one request id: its responses, undecodable payloads, and the agent's `next` messages. */
class DialogCollector {
  readonly messages: ObservedMessage<AgentResponse>[] = [];
  readonly undecodable: Buffer[] = [];
  readonly nextMessages: ObservedMessage<AgentRequest>[] = [];
  private ownRequestSeen = false;
  private finished: (() => void) | undefined;
  readonly ended = new Promise<void>((resolve) => (this.finished = resolve));

  constructor(
    readonly id: string,
    private readonly body: Buffer,
  ) {}

  readonly onResponse = async (message: IncomingMessage): Promise<void> => {
    await message.ack();
    if ((message.properties.id ?? 'unknown') !== this.id) return;
    let value: AgentResponse;
    try {
      value = agentResponseCodec.decode(message.payload);
    } catch {
      this.undecodable.push(message.payload);
      return;
    }
    this.messages.push({ value, raw: parseRaw(message.payload) ?? {}, properties: message.properties, payload: message.payload });
    if (value.end_of_dialog) this.finished?.();
  };

  readonly onRequest = async (message: IncomingMessage): Promise<void> => {
    await message.ack();
    if ((message.properties.id ?? 'unknown') !== this.id) return;
    if (!this.ownRequestSeen && message.payload.equals(this.body)) {
      this.ownRequestSeen = true;
      return;
    }
    try {
      const value = agentRequestCodec.decode(message.payload);
      this.nextMessages.push({ value, raw: parseRaw(message.payload) ?? {}, properties: message.properties, payload: message.payload });
    } catch {
      // Not a next message of the agent's (e.g. a second raw request with the same id).
    }
  };

  result(): AskResult {
    const responses = this.messages.map((m) => m.value);
    return {
      id: this.id,
      responses,
      messages: this.messages,
      undecodable: this.undecodable,
      nextRequests: this.nextMessages.map((m) => m.value),
      nextMessages: this.nextMessages,
      last: responses.find((r) => r.end_of_dialog) as AgentResponse,
      answer: responses
        .filter((r) => r.message_type === 'answer')
        .map((r) => r.content)
        .join(''),
    };
  }

  timedOut(responseTopic: string, timeoutMs: number): AskTimeoutError {
    const responses = this.messages.map((m) => m.value);
    return new AskTimeoutError(
      `no end_of_dialog response for id ${this.id} on ${responseTopic} within ${timeoutMs} ms; ` +
        `received ${responses.length}: [${responses.map(describe).join(', ')}]` +
        (this.undecodable.length ? `, ${this.undecodable.length} undecodable` : '') +
        `; next messages: ${this.nextMessages.length}`,
      responses,
      this.nextMessages.map((m) => m.value),
    );
  }
}

/**
 * Publish `payload` on the flow's request topic and collect what the agent answers under its id. When nothing
 * came because the broker dropped the request before the agent's subscription got it (its own statistics say
 * so), the ask is made once more under a fresh id, with a warning: that loss is the broker's, not the agent's,
 * and a test that names the id (`id`, `properties`) is left to see the timeout.
 */
export async function askAgent(gateway: Gateway, payload: Buffer | string, options: AskOptions = {}): Promise<AskResult> {
  try {
    return await askOnce(gateway, payload, options);
  } catch (error) {
    if (!(error instanceof AskTimeoutError) || error.droppedForAgent === 0 || options.id || options.properties) throw error;
    console.warn(`[gateway-ask] asking once more: ${error.message.split('\n')[0]}; the broker dropped ${error.droppedForAgent} message(s) for the agent's subscription`);
    return askOnce(gateway, payload, options);
  }
}

async function askOnce(gateway: Gateway, payload: Buffer | string, options: AskOptions): Promise<AskResult> {
  const topics = agentFlowTopics(gateway.workspace, options.flow ?? gateway.defaultFlow);
  const requestTopic = queueToTopic(topics.request ?? '');
  const responseTopic = queueToTopic(topics.response ?? '');
  const properties = options.properties ?? { id: options.id ?? randomUUID() };
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  const timeoutMs = options.timeoutMs ?? 20_000;
  const collector = new DialogCollector(properties.id ?? 'unknown', body);

  const consumers: Consumer[] = [];
  try {
    consumers.push(await subscribeExclusive(gateway.transport, responseTopic, 'rr', collector.onResponse));
    if (options.observeNext ?? true) {
      consumers.push(await subscribeExclusive(gateway.transport, requestTopic, 'observer', collector.onRequest));
    }
    if (options.publish) await options.publish(requestTopic, body, properties);
    else await (await gateway.producerFor(requestTopic)).send({ payload: body, properties });

    if (!(await endsWithin(collector.ended, timeoutMs))) {
      const error = collector.timedOut(responseTopic, timeoutMs);
      if (collector.messages.length === 0 && collector.nextMessages.length === 0 && gateway.droppedForAgent) {
        error.droppedForAgent = await gateway.droppedForAgent(requestTopic, options.flow ?? gateway.defaultFlow).catch(() => 0);
      }
      const { diagnose } = gateway;
      if (diagnose) error.message += `\n${await renderReport(() => diagnose(collector.id, { request: requestTopic, response: responseTopic }))}`;
      throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, options.settleMs ?? gateway.defaultSettleMs));
    return collector.result();
  } finally {
    await Promise.allSettled(consumers.map((c) => c.close({ unsubscribe: true })));
  }
}

function subscribeExclusive(
  transport: Transport,
  topic: string,
  prefix: string,
  handler: (message: IncomingMessage) => Promise<void>,
): Promise<Consumer> {
  return transport.subscribe({ topic, subscription: `${prefix}-${randomBytes(6).toString('hex')}`, subscriptionType: 'Exclusive', handler });
}

/** True when `ended` resolved within `timeoutMs`. */
async function endsWithin(ended: Promise<void>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([ended.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs)))]);
  clearTimeout(timer);
  return !timedOut;
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
