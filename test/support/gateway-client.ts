/**
 * A many-conversation client of the agent, as TrustGraph's gateway talks to it (docs/trustgraph-wire-notes.md §5.4–5.5): one
 * producer on the flow's request topic, one Exclusive subscription (unique name) on its response topic, every
 * response collected under its `id` property. Unlike `harness.ask` (two subscriptions per question), it can
 * keep a thousand conversations open at once, and it counts end_of_dialog messages per id, so a conversation
 * answered twice is as visible as one never answered.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { queueToTopic } from '../../src/bus/topics.js';
import type { Consumer, Producer, Properties, Transport } from '../../src/bus/transport.js';
import {
  agentRequestCodec,
  agentResponseCodec,
  makeAgentRequest,
  type AgentRequestInput,
  type AgentResponse,
} from '../../src/wire/index.js';
import { agentFlowTopics } from '../../dev/flow-config.js';

export interface Conversation {
  readonly id: string;
  /** Decoded responses with this id, in arrival order. */
  readonly responses: AgentResponse[];
  /** Payloads with this id that are not AgentResponses. */
  readonly undecodable: Buffer[];
  /** How many responses had `end_of_dialog: true` (1 is right; 0 lost or still running; 2+ answered twice). */
  ends: number;
  /** `Date.now()` when the first end_of_dialog arrived. */
  endedAt: number | undefined;
}

export interface GatewayClient {
  readonly requestTopic: string;
  readonly responseTopic: string;
  /** Every conversation seen or started, by id (responses for unknown ids are kept too). */
  readonly conversations: Map<string, Conversation>;
  /** Publish an AgentRequest under a fresh (or the given) id; resolves with the id once the broker took it. */
  send(request: AgentRequestInput, id?: string): Promise<string>;
  /** Publish any payload with these properties (the id defaults to a fresh uuid); resolves with the id. */
  sendRaw(payload: Buffer | string, properties?: Properties): Promise<string>;
  conversation(id: string): Conversation;
  /** The last end_of_dialog response of a conversation (throws when there is none). */
  last(id: string): AgentResponse;
  /** Resolves once every id has at least one end_of_dialog; rejects after `timeoutMs` naming the others. */
  waitEnded(ids: readonly string[], timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

export interface GatewayClientOptions {
  transport: Transport;
  workspace: string;
  flow?: string;
}

export async function startGatewayClient(options: GatewayClientOptions): Promise<GatewayClient> {
  const topics = agentFlowTopics(options.workspace, options.flow ?? 'default');
  const requestTopic = queueToTopic(topics.request ?? '');
  const responseTopic = queueToTopic(topics.response ?? '');
  const conversations = new Map<string, Conversation>();
  const conversation = (id: string): Conversation => {
    let found = conversations.get(id);
    if (!found) {
      found = { id, responses: [], undecodable: [], ends: 0, endedAt: undefined };
      conversations.set(id, found);
    }
    return found;
  };

  const consumer: Consumer = await options.transport.subscribe({
    topic: responseTopic,
    subscription: `gw-${randomBytes(6).toString('hex')}`,
    subscriptionType: 'Exclusive',
    // A non-persistent topic drops what a subscription has no permits for. This gateway shares one event loop
    // with the agent and its stand-ins, so during a burst of a thousand conversations it falls behind; its
    // queue holds every response of such a burst (the WebSocket API caps it at 1000 whatever is asked).
    receiverQueueSize: 10_000,
    handler: async (message) => {
      await message.ack();
      const entry = conversation(message.properties.id ?? 'unknown');
      let response: AgentResponse;
      try {
        response = agentResponseCodec.decode(message.payload);
      } catch {
        entry.undecodable.push(message.payload);
        return;
      }
      entry.responses.push(response);
      if (response.end_of_dialog) {
        entry.ends += 1;
        entry.endedAt ??= Date.now();
      }
    },
  });
  let producer: Producer;
  try {
    producer = await options.transport.createProducer(requestTopic);
  } catch (error) {
    await consumer.close({ unsubscribe: true }).catch(() => undefined);
    throw error;
  }

  const client: GatewayClient = {
    requestTopic,
    responseTopic,
    conversations,
    async send(request, id = randomUUID()) {
      conversation(id);
      await producer.send({ payload: agentRequestCodec.encode(makeAgentRequest(request)), properties: { id } });
      return id;
    },
    async sendRaw(payload, properties = { id: randomUUID() }) {
      const id = properties.id ?? 'unknown';
      conversation(id);
      await producer.send({ payload: typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload, properties });
      return id;
    },
    conversation,
    last(id) {
      const last = conversation(id).responses.filter((r) => r.end_of_dialog).at(-1);
      if (!last) throw new Error(`conversation ${id} has no end_of_dialog response`);
      return last;
    },
    async waitEnded(ids, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const open = ids.filter((id) => conversation(id).ends === 0);
        if (open.length === 0) return;
        if (Date.now() > deadline) {
          const sample = open.slice(0, 5).map((id) => {
            const kinds = conversation(id).responses.map((r) => r.message_type || '(empty)');
            return `${id}: [${kinds.join(', ')}]`;
          });
          throw new Error(
            `${open.length} of ${ids.length} conversation(s) got no end_of_dialog within ${timeoutMs} ms; e.g. ${sample.join('; ')}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async close() {
      await Promise.allSettled([consumer.close({ unsubscribe: true }), producer.close()]);
    },
  };
  return client;
}
