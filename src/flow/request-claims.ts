/**
 * Which replica took a request the broker delivered again, asked of the other replicas before running it.
 *
 * A broker that lost an ack (RabbitMQ: the connection closed before the node read it, or the queue's node went
 * and a mirror took over without it) delivers the request again, marked redelivered, to any consumer of the
 * queue. The replica that took it first tells from its own `RecentRequests`; another replica cannot, and running
 * the request there ends its conversation twice. So a replica that gets such a delivery asks on a topic every
 * replica of the agent reads (`ask`), and a replica that runs the request or ended it lately answers (`have`).
 * Answered: the delivery is left. Not answered within the wait: it runs, as a request given back to the broker or
 * taken by a replica that died is meant to. The ask is repeated during the wait, for the replica that took it may
 * itself be reconnecting after the same fault.
 *
 * Only redelivered requests no replica here remembers cost anything: the wait (`waitMs`, 5 s by default). Every
 * other request goes on at once, and the topic carries nothing while the broker keeps its acks.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { z } from 'zod';
import { type Consumer, type IncomingMessage, type Producer, queueId, queueToTopic, requestResponseSubscriptionName, type Transport } from '../bus/index.js';
import type { RecentRequests } from './recent-requests.js';

/** How long a replica waits for another to say it took a request, by default. */
export const DEFAULT_CLAIM_WAIT_MS = 5000;
/** How often the ask is sent again while waiting. */
const ASK_EVERY_MS = 1000;

export interface RequestClaimsParts {
  transport: Transport;
  /** The requests this replica runs or ended lately, across its flows. */
  recent: RecentRequests;
  /** The claims topic: `claimsTopic(topicspace, processorId)`. */
  topic: string;
  logger: Logger;
  waitMs?: number;
  /** This replica's name on the claims topic (logged by the replica that leaves a delivery): host/pid/random by default. */
  replica?: string;
}

/** One message on the claims topic: a question about a request's key, or the answer of a replica that has it. */
const ClaimSchema = z.union([z.object({ ask: z.string() }), z.object({ have: z.string() })]);
type ClaimMessage = z.infer<typeof ClaimSchema>;

/** The topic the replicas of agent `processorId` ask each other on: a `notify` topic, which every subscriber reads whole. */
export function claimsTopic(topicspace: string, processorId: string): string {
  return queueToTopic(queueId(`agent-request-claims:${processorId}`, 'notify', topicspace));
}

export class RequestClaims {
  readonly replica: string;
  private producer: Producer | undefined;
  private consumer: Consumer | undefined;
  /** Key → the resolvers of the asks waiting for an answer about it. */
  private readonly waiting = new Map<string, Set<(holder: string) => void>>();
  private readonly waitMs: number;

  constructor(private readonly parts: RequestClaimsParts) {
    this.replica = parts.replica ?? `${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`;
    this.waitMs = parts.waitMs ?? DEFAULT_CLAIM_WAIT_MS;
  }

  /** Subscribes and opens the producer; the replica answers asks from here on. */
  async start(): Promise<void> {
    const { transport, topic } = this.parts;
    this.consumer = await transport.subscribe({
      topic,
      subscription: requestResponseSubscriptionName(),
      subscriptionType: 'Exclusive',
      handler: (message) => this.onMessage(message),
    });
    this.producer = await transport.createProducer(topic);
  }

  async stop(): Promise<void> {
    for (const resolvers of this.waiting.values()) for (const resolve of resolvers) resolve('');
    this.waiting.clear();
    const { consumer, producer } = this;
    this.consumer = undefined;
    this.producer = undefined;
    await Promise.allSettled([consumer?.close({ unsubscribe: true }), producer?.close()]);
  }

  /**
   * The replica that runs `key` or ended it lately, or undefined when none answered within the wait (or this
   * replica cannot ask: not started, or the claims topic failed).
   */
  async holderOf(key: string): Promise<string | undefined> {
    if (!this.producer) return undefined;
    let resolveHolder!: (holder: string) => void;
    const answered = new Promise<string>((resolve) => (resolveHolder = resolve));
    let resolvers = this.waiting.get(key);
    if (!resolvers) this.waiting.set(key, (resolvers = new Set()));
    resolvers.add(resolveHolder);
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const asking = new Promise<undefined>((resolve) => {
      const ask = (): void => {
        if (Date.now() - started >= this.waitMs) return resolve(undefined);
        this.send({ ask: key });
        timer = setTimeout(ask, Math.min(ASK_EVERY_MS, this.waitMs - (Date.now() - started)));
      };
      ask();
    });
    try {
      const holder = await Promise.race([answered, asking]);
      return holder || undefined;
    } finally {
      clearTimeout(timer);
      resolvers.delete(resolveHolder);
      if (resolvers.size === 0) this.waiting.delete(key);
    }
  }

  private send(message: ClaimMessage): void {
    this.producer?.send({ payload: Buffer.from(JSON.stringify(message)), properties: { from: this.replica } }).catch((err: unknown) => {
      this.parts.logger.debug({ err }, 'Could not publish on the request claims topic');
    });
  }

  private async onMessage(message: IncomingMessage): Promise<void> {
    await message.ack().catch(() => undefined);
    const from = message.properties.from;
    if (from === undefined || from === this.replica) return;
    const claim = parseClaim(message.payload);
    if (!claim) {
      this.parts.logger.warn({ from }, 'A message on the request claims topic is neither an ask nor an answer: ignored');
      return;
    }
    if ('ask' in claim) {
      if (this.parts.recent.has(claim.ask)) this.send({ have: claim.ask });
      return;
    }
    for (const resolve of this.waiting.get(claim.have) ?? []) resolve(from);
  }
}

function parseClaim(payload: Buffer): ClaimMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(payload.toString('utf8'));
  } catch {
    return undefined;
  }
  const parsed = ClaimSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
